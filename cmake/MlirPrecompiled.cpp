// The translation unit of TegulaMlirPch (CMakeLists.txt, TEGULA_PCH): the
// precompiled MLIR headers are all it builds.
