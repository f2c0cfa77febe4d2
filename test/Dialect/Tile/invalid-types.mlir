// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{pointer element type 'f64' is not one of i1, i32, i64, f16, bf16, f32}}
func.func private @bad_ptr(!tile.ptr<f64>)

// -----

// expected-error @+1 {{global tensor element type 'i8' is not one of i1, i32, i64, f16, bf16, f32}}
func.func private @bad_tensor_element(!tile.tensor<?xi8>)

// -----

// expected-error @+1 {{global tensor extent 0 in dimension 1 must be positive}}
func.func private @zero_extent(!tile.tensor<?x0xf32>)

// -----

// expected-error @+1 {{global tensor needs at least one dimension}}
func.func private @rank0(!tile.tensor<f32>)

// -----

// expected-error @+1 {{pipeline block 'tensor<48x64xbf16>' has extent 48 in dimension 0, which is not a power of two}}
func.func private @pipeline_not_pow2(!tile.pipeline<48x64xbf16, stages = 2>)

// -----

// expected-error @+1 {{pipeline block 'tensor<2048x1024xbf16>' holds 2097152 elements, more than the limit of 1048576}}
func.func private @pipeline_too_big(!tile.pipeline<2048x1024xbf16, stages = 2>)

// -----

// expected-error @+1 {{pipeline needs at least one stage, got 0}}
func.func private @pipeline_no_stages(!tile.pipeline<64x64xbf16, stages = 0>)

// -----

// expected-error @+1 {{pipeline element type 'f64' is not one of i1, i32, i64, f16, bf16, f32}}
func.func private @pipeline_f64(!tile.pipeline<64x64xf64, stages = 2>)

// -----

// expected-error @+1 {{pipeline block needs at least one dimension}}
func.func private @pipeline_rank0(!tile.pipeline<bf16, stages = 2>)

// -----

// expected-error @+1 {{expected 'mut' or 'strided', in that order}}
func.func private @strided_then_mut(!tile.tensor<?xf32, strided, mut>)

// -----

// Good cases beside the bad ones: these all verify.
func.func private @good_types(!tile.ptr<i1>, !tile.tensor<1x?xi64, mut>,
                              !tile.tensor<?x8xf32, strided>,
                              !tile.tensor<?xbf16, mut, strided>,
                              !tile.pipeline<1x1024xf32, stages = 1>,
                              !tile.pipeline<1024x1024xf16, stages = 4>)
