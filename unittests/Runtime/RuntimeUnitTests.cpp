//===- RuntimeUnitTests.cpp - Unit tests of lib/Runtime -------------------===//
//
// Known answers worked out by hand (in the comments) for the float64
// references, the expression evaluator, the f16/bf16 conversions, .npy,
// the runners' host-side flow (HostSession),;
// the bundle writer against its reader and target names are in
// BundleTests.cpp.
// Prints one line per failure and exits non-zero if any.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Chip.h"
#include "tegula/Runtime/DType.h"
#include "tegula/Runtime/Expr.h"
#include "tegula/Runtime/HostSession.h"
#include "tegula/Runtime/ImageCheck.h"
#include "tegula/Runtime/LoadedKernel.h"
#include "tegula/Runtime/References.h"
#include "tegula/Runtime/Strides.h"
#include "tegula/Runtime/Tensor.h"
#include "tegula/Runtime/Tuning.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace tegula::rt;
using namespace tegula::unittest;

namespace {
void expectValue(const char *text, int64_t want, int line,
                 const Env &env = {}) {
  int64_t got = 0;
  std::string error;
  bool ok = evalExpr(text, env, got, error);
  expect(ok && got == want,
         std::string(text) + " = " + (ok ? std::to_string(got) : error) +
             ", want " + std::to_string(want),
         line);
}
#define EXPECT_VALUE(text, want, ...)                                          \
  expectValue(text, want, __LINE__, ##__VA_ARGS__)

void expectError(const char *text, const char *message, int line,
                 const Env &env = {}) {
  int64_t got = 0;
  std::string error;
  bool ok = evalExpr(text, env, got, error);
  expect(!ok && error.find(message) != std::string::npos,
         std::string(text) + " should fail with '" + message + "', got '" +
             (ok ? std::to_string(got) : error) + "'",
         line);
}
#define EXPECT_ERROR(text, message, ...)                                       \
  expectError(text, message, __LINE__, ##__VA_ARGS__)

void testExpr() {
  EXPECT_VALUE("1 + 2 * 3", 7);
  EXPECT_VALUE("(1 + 2) * 3", 9);
  EXPECT_VALUE("10 - 2 - 3", 5);   // left associative
  EXPECT_VALUE("100 / 10 / 5", 2); // left associative
  EXPECT_VALUE("7 / 2", 3);
  EXPECT_VALUE("-7 / 2", -3); // truncates toward zero
  EXPECT_VALUE("-7 % 2", -1);
  EXPECT_VALUE("7 % -2", 1);
  EXPECT_VALUE("cdiv(7, 2)", 4);
  EXPECT_VALUE("cdiv(8, 2)", 4);
  EXPECT_VALUE("cdiv(1, 128)", 1);
  EXPECT_VALUE("min(3, -4)", -4);
  EXPECT_VALUE("max(3, 4) * 2", 8);
  EXPECT_VALUE("- -3", 3);
  EXPECT_VALUE("-(2 + 3)", -5);
  EXPECT_VALUE("1 + 2 < 4", 1);
  EXPECT_VALUE("1 < 2 && 3 >= 3", 1);
  EXPECT_VALUE("0 || 0 && 1", 0);
  EXPECT_VALUE("1 || 0 && 0", 1); // && binds tighter than ||
  EXPECT_VALUE("!0", 1);
  EXPECT_VALUE("!(1 || 0)", 0);
  EXPECT_VALUE("3 != 3", 0);
  EXPECT_VALUE("2 == 2", 1);
  EXPECT_VALUE("4 <= 3", 0);
  EXPECT_VALUE("4 > 3", 1);
  EXPECT_VALUE("true && !false", 1);
  Env env = {{"N", 4096}, {"H", 8}, {"Z", 2}};
  EXPECT_VALUE("cdiv(N, 128)", 32, env);
  EXPECT_VALUE("Z * H", 16, env);
  EXPECT_VALUE("4 * Z * H * N * N * 128",
               int64_t(4) * 2 * 8 * 4096 * 4096 * 128, env);
  EXPECT_VALUE("N % 128 == 0", 1, env);
  EXPECT_ERROR("1 / 0", "division by zero");
  EXPECT_ERROR("N % (H - 8)", "division by zero", env);
  EXPECT_ERROR("cdiv(1, 0)", "division by zero");
  EXPECT_ERROR("9223372036854775807 + 1", "overflow");
  EXPECT_ERROR("99999999999999999999", "64 bits");
  EXPECT_ERROR("(1 + 2", "expected ')'");
  EXPECT_ERROR("1 +", "expected an expression");
  EXPECT_ERROR("foo(1, 2)", "unknown function 'foo'");
  EXPECT_ERROR("cdiv(1)", "takes 2 arguments");
  EXPECT_ERROR("M + 1", "'M' has no value");
  EXPECT_ERROR("1 $ 2", "unexpected '$'");
  EXPECT_ERROR("", "expected an expression");
  // Prefix operators bind tighter than any binary one; chains associate
  // left; brackets and calls nest (the parser's stacks).
  EXPECT_VALUE("-2 * 3 + 1", -5);
  EXPECT_VALUE("2 * -3 + 1", -5);
  EXPECT_VALUE("!0 + 1", 2);
  EXPECT_VALUE("!2 == 0", 1);
  EXPECT_VALUE("1 - 2 + 3", 2);
  EXPECT_VALUE("2 * 3 % 4", 2);
  EXPECT_VALUE("1 < 2 == 1", 1);
  EXPECT_VALUE("-(-(-1))", -1);
  EXPECT_VALUE("max(1, min(2, 3)) + cdiv(-7, 2)", -1);
  EXPECT_VALUE("+ 5", 5);
  EXPECT_VALUE("-9223372036854775807 - 1", INT64_MIN);
  EXPECT_ERROR("-(-9223372036854775807 - 1)", "overflow in unary '-'");
  EXPECT_ERROR("(1, 2)", "expected ')' at column 3");
  EXPECT_ERROR(")", "unexpected ')' at column 1");
  EXPECT_ERROR("1 2", "unexpected '2' at column 3");
  EXPECT_ERROR("(1 2)", "expected ')' at column 4");
  EXPECT_ERROR("min(1 2)", "expected ',' or ')' at column 7");
  EXPECT_ERROR("cdiv(1, 2, 3)", "cdiv takes 2 arguments, got 3 at column 14");
  EXPECT_ERROR("min()", "unexpected ')' at column 5");
  EXPECT_ERROR("max(", "expected an expression at column 5");
  EXPECT_ERROR("((1)", "expected ')' at column 5");
  EXPECT_ERROR("1,2", "unexpected ',' at column 2");

  Expr e;
  std::string error;
  EXPECT(Expr::parse("N", e, error) && e.isName());
  EXPECT(Expr::parse("R / 2 + N * R", e, error) && !e.isName() &&
         e.names() == std::vector<std::string>({"R", "N"}));
  EXPECT(Expr::parse(" N ", e, error) && e.isName() &&
         e.names() == std::vector<std::string>({"N"}));
  int64_t literal = 0;
  EXPECT(Expr::parse("64", e, error) && e.isLiteral(&literal) && literal == 64);
  EXPECT(Expr::parse("-64", e, error) && !e.isLiteral());
}

void testConversions() {
  EXPECT(floatToHalf(1.0f) == 0x3c00);
  EXPECT(floatToHalf(-2.0f) == 0xc000);
  EXPECT(floatToHalf(65504.0f) == 0x7bff); // largest half
  EXPECT(floatToHalf(65519.0f) == 0x7bff);
  EXPECT(floatToHalf(65520.0f) == 0x7c00); // halfway to 2^16 rounds to inf
  EXPECT(floatToHalf(std::ldexp(1.0f, -24)) == 0x0001); // smallest subnormal
  EXPECT(floatToHalf(std::ldexp(1.0f, -26)) == 0x0000); // under half of it
  EXPECT(floatToHalf(std::ldexp(3.0f, -25)) == 0x0002); // 1.5 ulp: to even
  EXPECT(floatToHalf(std::ldexp(1.0f, -14)) == 0x0400); // smallest normal
  EXPECT(floatToHalf(1.0f + std::ldexp(1.0f, -11)) == 0x3c00); // tie: even
  EXPECT(floatToHalf(1.0f + std::ldexp(3.0f, -11)) == 0x3c02); // tie: even
  EXPECT(floatToHalf(1.0f + std::ldexp(1.0f, -10)) == 0x3c01);
  EXPECT(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT(halfToFloat(0x3555) == 0.333251953125f); // 1365/4096
  EXPECT(halfToFloat(0x8001) == -std::ldexp(1.0f, -24));
  // Every non-NaN half survives a round trip through float.
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (!nan && floatToHalf(halfToFloat(uint16_t(h))) != h)
      ++bad;
  }
  EXPECT(bad == 0);

  EXPECT(floatToBF16(1.0f) == 0x3f80);
  EXPECT(floatToBF16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80); // tie: even
  EXPECT(floatToBF16(1.0f + std::ldexp(3.0f, -8)) == 0x3f82); // tie: even
  EXPECT(floatToBF16(1.0f + std::ldexp(1.0f, -7)) == 0x3f81);
  EXPECT(bf16ToFloat(0xc040) == -3.0f);
  EXPECT(std::isnan(bf16ToFloat(floatToBF16(NAN))));
}

std::vector<uint8_t> npyBytes(const std::string &dict,
                              const std::vector<uint8_t> &data) {
  std::vector<uint8_t> b = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(dict.size()), 0};
  b.insert(b.end(), dict.begin(), dict.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

void testNpy() {
  // f16 [1.0, -2.0] as numpy writes it.
  NpyArray a;
  std::string error;
  EXPECT(parseNpy(npyBytes("{'descr': '<f2', 'fortran_order': False, "
                           "'shape': (2,), }\n",
                           {0x00, 0x3c, 0x00, 0xc0}),
                  a, error));
  EXPECT(a.descr == "<f2" && a.shape == std::vector<int64_t>({2}));
  EXPECT(npyElement(a, 0) == 1.0 && npyElement(a, 1) == -2.0);

  // Round trip; the header is padded so the data is 64-byte aligned.
  NpyArray b;
  b.descr = "<i4";
  b.shape = {2, 3};
  for (int32_t v = -3; v < 3; ++v)
    b.data.insert(b.data.end(), reinterpret_cast<uint8_t *>(&v),
                  reinterpret_cast<uint8_t *>(&v) + 4);
  std::vector<uint8_t> bytes = serializeNpy(b);
  EXPECT((bytes.size() - 24) % 64 == 0);
  NpyArray c;
  EXPECT(parseNpy(bytes, c, error) && c.shape == b.shape && c.data == b.data);
  EXPECT(npyElement(c, 5) == 2);

  // Scalars (shape ()) and Python 2 long suffixes.
  EXPECT(parseNpy(npyBytes("{'descr': '<f8', 'fortran_order': False, "
                           "'shape': (), }\n",
                           {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}),
                  c, error) &&
         c.shape.empty() && npyElement(c, 0) == 1.0);
  EXPECT(parseNpy(npyBytes("{'descr': '|b1', 'fortran_order': False, "
                           "'shape': (1L, 2L), }\n",
                           {1, 0}),
                  c, error) &&
         c.shape == std::vector<int64_t>({1, 2}));

  EXPECT(!parseNpy(npyBytes("{'descr': '>f4', 'fortran_order': False, "
                            "'shape': (1,), }\n",
                            {0, 0, 0, 0}),
                   c, error) &&
         error.find("unsupported .npy dtype '>f4'") != std::string::npos);
  EXPECT(!parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2,), }\n",
                            {0, 0, 0, 0}),
                   c, error) &&
         error.find("does not match shape [2]") != std::string::npos);
  EXPECT(!parseNpy({'x', 'y'}, c, error));

  // bf16 from <f4 rounds to nearest even; back to <f4 is exact.
  NpyArray f;
  f.descr = "<f4";
  f.shape = {2};
  for (float v : {1.00390625f, 1.01171875f}) // 1 + 2^-8, 1 + 3 * 2^-8
    f.data.insert(f.data.end(), reinterpret_cast<uint8_t *>(&v),
                  reinterpret_cast<uint8_t *>(&v) + 4);
  HostTensor t;
  EXPECT(tensorFromNpy(f, DType::BF16, t, error));
  EXPECT(t.get(0) == 1.0 && t.get(1) == 1.015625);
  NpyArray back = tensorToNpy(t);
  float v1;
  std::memcpy(&v1, back.data.data() + 4, 4);
  EXPECT(back.descr == "<f4" && v1 == 1.015625f);
  EXPECT(!tensorFromNpy(f, DType::F16, t, error) &&
         error.find("f16 tensor is read from <f2") != std::string::npos);
}

void testFill() {
  for (DType type :
       {DType::F16, DType::BF16, DType::F32, DType::I32, DType::I64}) {
    HostTensor t(type, {1000});
    fillRandom(t, 7);
    bool ok = true;
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = t.get(i);
      ok &= v != 0 && std::fabs(v) <= (isFloat(type) ? 1.0 : 8.0) &&
            std::fabs(v) >= (isFloat(type) ? 1.0 / 64 : 1.0);
    }
    expect(ok, std::string("random ") + dtypeName(type) + " in range",
           __LINE__);
    HostTensor u(type, {1000});
    fillRandom(u, 7);
    EXPECT(u.bytes == t.bytes); // seeded
    fillRandom(u, 8);
    EXPECT(u.bytes != t.bytes);

    fillPoison(t);
    int64_t first;
    EXPECT(countPoison(t, first) == 1000 && first == 0);
    t.set(0, 0.5);
    t.set(1, 1);
    EXPECT(countPoison(t, first) == 998 && first == 2);
    if (isFloat(type))
      EXPECT(std::isnan(t.get(5)));
  }
  EXPECT(formatIndex({2, 3, 4}, 23) == "[1, 2, 3]");
}

void testAttention() {
  // One head, D = 1, scale 1, q = [1, 1], k = [0, ln 3], v = [4, 8].
  // Row 1 weights: e^0 = 1 and e^(ln 3) = 3, so o = (4 + 3 * 8) / 4 = 7 and
  // lse = ln(1 + 3) = ln 4. Row 0 is the same without the causal mask; with
  // it, row 0 sees key 0 only: o = 4, lse = ln 1 = 0.
  double q[] = {1, 1}, k[] = {0, std::log(3.0)}, v[] = {4, 8};
  double o[2], lse[2];
  attentionForward(q, k, v, 1, 1, 2, 2, 1, 1, false, 1.0, o, lse, false);
  EXPECT_NEAR(o[0], 7);
  EXPECT_NEAR(o[1], 7);
  EXPECT_NEAR(lse[1], std::log(4.0));
  attentionForward(q, k, v, 1, 1, 2, 2, 1, 1, true, 1.0, o, lse, false);
  EXPECT_NEAR(o[0], 4);
  EXPECT_NEAR(lse[0], 0);
  EXPECT_NEAR(o[1], 7);
  attentionForward(q, k, v, 1, 1, 2, 2, 1, 1, true, 1.0, o, lse, true);
  EXPECT_NEAR(lse[1], 2); // log2 4

  // Scale and D = 2 with Dv = 2: q = [1, 1], k0 = [0, 0], k1 = [1, 1],
  // scale ln(2) / 2: scores 0 and ln 2, weights 1/3 and 2/3.
  // v0 = [3, 0], v1 = [0, 6]: o = [1, 4]; lse = ln 3.
  double q2[] = {1, 1}, k2[] = {0, 0, 1, 1}, v2[] = {3, 0, 0, 6};
  double o2[2], lse2[1];
  attentionForward(q2, k2, v2, 1, 1, 1, 2, 2, 2, false, std::log(2.0) / 2, o2,
                   lse2, false);
  EXPECT_NEAR(o2[0], 1);
  EXPECT_NEAR(o2[1], 4);
  EXPECT_NEAR(lse2[0], std::log(3.0));

  // Two heads are independent: head 1 is head 0 of the first case.
  double qh[] = {5, 5, 1, 1}, kh[] = {0, 0, 0, std::log(3.0)},
         vh[] = {1, 1, 4, 8};
  double oh[4];
  attentionForward(qh, kh, vh, 1, 2, 2, 2, 1, 1, false, 1.0, oh, nullptr,
                   false);
  EXPECT_NEAR(oh[0], 1);
  EXPECT_NEAR(oh[2], 7);
}

void testAttentionBackward() {
  // The first case of testAttention with do = [1, 2]: both rows have
  // P = [1/4, 3/4] and o = 7. dP_ij = do_i v_j: [4, 8] and [8, 16]; delta =
  // rowsum(P dP) = [7, 14] = do * o. dS = P (dP - delta): [-3/4, 3/4] and
  // [-3/2, 3/2]. dq_i = sum_j dS_ij k_j = [3/4 ln 3, 3/2 ln 3]; dk_j =
  // sum_i dS_ij q_i = [-9/4, 9/4]; dv_j = sum_i P_ij do_i = [3/4, 9/4].
  double q[] = {1, 1}, k[] = {0, std::log(3.0)}, v[] = {4, 8}, g[] = {1, 2};
  double dq[2], dk[2], dv[2], o[2], lse[2], delta[2];
  attentionBackward(q, k, v, g, 1, 1, 2, 1, false, 1.0, dq, dk, dv, o, lse,
                    delta);
  EXPECT_NEAR(dq[0], 0.75 * std::log(3.0));
  EXPECT_NEAR(dq[1], 1.5 * std::log(3.0));
  EXPECT_NEAR(dk[0], -2.25);
  EXPECT_NEAR(dk[1], 2.25);
  EXPECT_NEAR(dv[0], 0.75);
  EXPECT_NEAR(dv[1], 2.25);
  EXPECT_NEAR(o[1], 7);
  EXPECT_NEAR(lse[0], std::log(4.0));
  EXPECT_NEAR(delta[0], 7);
  EXPECT_NEAR(delta[1], 14);
  // Causal: row 0 sees key 0 alone, P = [1, 0], o = 4, delta = 4 = dP_00,
  // so its dS is 0; row 1 is unchanged. dq = [0, 3/2 ln 3], dk = [-3/2,
  // 3/2], dv = [1 + 2/4, 2 * 3/4] = [3/2, 3/2].
  attentionBackward(q, k, v, g, 1, 1, 2, 1, true, 1.0, dq, dk, dv, o, lse,
                    delta);
  EXPECT_NEAR(dq[0], 0);
  EXPECT_NEAR(dq[1], 1.5 * std::log(3.0));
  EXPECT_NEAR(dk[0], -1.5);
  EXPECT_NEAR(dk[1], 1.5);
  EXPECT_NEAR(dv[0], 1.5);
  EXPECT_NEAR(dv[1], 1.5);
  EXPECT_NEAR(o[0], 4);
  EXPECT_NEAR(lse[0], 0);
  EXPECT_NEAR(delta[0], 4);
  // Scale 1/2 on q = [2, 2] gives the same scores, so the same P and dS:
  // dq carries the scale (halved), dk = scale * dS^T q is unchanged.
  double q2[] = {2, 2};
  attentionBackward(q2, k, v, g, 1, 1, 2, 1, false, 0.5, dq, dk, dv, nullptr,
                    nullptr, nullptr);
  EXPECT_NEAR(dq[0], 0.375 * std::log(3.0));
  EXPECT_NEAR(dk[1], 2.25);
  EXPECT_NEAR(dv[1], 2.25);

  // Grouped K/V heads: Z = 2, H = 4 query heads over HKV = 2 K/V heads
  // (N = 3, D = 2). Each query head's dq is that of multi-head attention on
  // its K/V head repeated, and each K/V head's dk, dv sum those of the two
  // query heads that read it; o, lse and delta are per query head.
  const int64_t Z = 2, H = 4, HKV = 2, N = 3, D = 2, G = H / HKV;
  const size_t nq = Z * H * N * D, nkv = Z * HKV * N * D, rows = Z * H * N;
  std::vector<double> gq(nq), gk(nkv), gv(nkv), gg(nq), rk(nq), rv(nq);
  for (size_t i = 0; i < nq; ++i)
    gq[i] = std::sin(0.7 * double(i) + 0.3), gg[i] = std::cos(1.3 * double(i));
  for (size_t i = 0; i < nkv; ++i)
    gk[i] = std::cos(0.9 * double(i) - 0.2), gv[i] = std::sin(1.1 * double(i));
  // K/V repeated to H heads: query head h of sequence z reads h / G.
  for (int64_t zh = 0; zh < Z * H; ++zh)
    for (int64_t e = 0; e < N * D; ++e) {
      int64_t from = ((zh / H) * HKV + (zh % H) / G) * N * D + e;
      rk[size_t(zh * N * D + e)] = gk[size_t(from)];
      rv[size_t(zh * N * D + e)] = gv[size_t(from)];
    }
  for (bool causal : {false, true}) {
    std::vector<double> dqG(nq), dkG(nkv), dvG(nkv), oG(nq), lG(rows),
        deG(rows);
    std::vector<double> dqM(nq), dkM(nq), dvM(nq), oM(nq), lM(rows), deM(rows);
    attentionBackwardGqa(gq.data(), gk.data(), gv.data(), gg.data(), Z, H, HKV,
                         N, N, D, causal, 0.8, dqG.data(), dkG.data(),
                         dvG.data(), oG.data(), lG.data(), deG.data());
    attentionBackward(gq.data(), rk.data(), rv.data(), gg.data(), Z, H, N, D,
                      causal, 0.8, dqM.data(), dkM.data(), dvM.data(),
                      oM.data(), lM.data(), deM.data());
    for (size_t i = 0; i < nq; ++i) {
      EXPECT_NEAR(dqG[i], dqM[i]);
      EXPECT_NEAR(oG[i], oM[i]);
    }
    for (size_t i = 0; i < rows; ++i) {
      EXPECT_NEAR(lG[i], lM[i]);
      EXPECT_NEAR(deG[i], deM[i]);
    }
    for (int64_t zk = 0; zk < Z * HKV; ++zk)
      for (int64_t e = 0; e < N * D; ++e) {
        double sk = 0, sv = 0;
        for (int64_t g = 0; g < G; ++g) {
          size_t at = size_t(((zk / HKV) * H + (zk % HKV) * G + g) * N * D + e);
          sk += dkM[at], sv += dvM[at];
        }
        EXPECT_NEAR(dkG[size_t(zk * N * D + e)], sk);
        EXPECT_NEAR(dvG[size_t(zk * N * D + e)], sv);
      }
  }
}

void testLinearAttention() {
  // [B=1, T=2, H=1, D=1], scale 0.5, q = [1, 2], k = [3, 4], v = [5, 6]:
  // o0 = 0.5 * (1*3) * 5 = 7.5; o1 = 0.5 * ((2*3) * 5 + (2*4) * 6) = 39.
  double q[] = {1, 2}, k[] = {3, 4}, v[] = {5, 6}, o[2];
  linearAttention(q, k, v, 1, 2, 1, 1, 1, 0.5, o);
  EXPECT_NEAR(o[0], 7.5);
  EXPECT_NEAR(o[1], 39);

  // H = 2 interleaved in memory as [B, T, H, D]; D = 2, Dv = 1, scale 1.
  // Head 0: q = [(1,0), (0,1)], k = [(1,1), (2,0)], v = [1, 10]:
  //   o0 = (1)*1 = 1; o1 = (1)*1 + (0)*10 = 1.
  // Head 1: q = [(1,1), (1,1)], k = [(1,0), (0,1)], v = [2, 3]:
  //   o0 = 1*2 = 2; o1 = 1*2 + 1*3 = 5.
  double q2[] = {1, 0, 1, 1, 0, 1, 1, 1};
  double k2[] = {1, 1, 1, 0, 2, 0, 0, 1};
  double v2[] = {1, 2, 10, 3};
  double o2[4];
  linearAttention(q2, k2, v2, 1, 2, 2, 2, 1, 1.0, o2);
  EXPECT_NEAR(o2[0], 1);
  EXPECT_NEAR(o2[1], 2);
  EXPECT_NEAR(o2[2], 1);
  EXPECT_NEAR(o2[3], 5);
}

void testRotary() {
  // x = [1, 2, 3, 4], R = D = 4, angle 90 degrees for pair 0 (cos 0, sin 1)
  // and 0 degrees for pair 1 (cos 1, sin 0).
  double x[] = {1, 2, 3, 4}, c[] = {0, 1}, s[] = {1, 0}, out[4];
  // Halves: pairs (0, 2) and (1, 3): (1, 3) -> (1*0 - 3*1, 3*0 + 1*1).
  rotary(x, c, s, 1, 1, 1, 4, 4, false, out);
  EXPECT_NEAR(out[0], -3);
  EXPECT_NEAR(out[2], 1);
  EXPECT_NEAR(out[1], 2);
  EXPECT_NEAR(out[3], 4);
  // Interleaved: pairs (0, 1) and (2, 3): (1, 2) -> (-2, 1).
  rotary(x, c, s, 1, 1, 1, 4, 4, true, out);
  EXPECT_NEAR(out[0], -2);
  EXPECT_NEAR(out[1], 1);
  EXPECT_NEAR(out[2], 3);
  EXPECT_NEAR(out[3], 4);
  // Partial, R = 2 of D = 4: pair (0, 1) rotated by 90 degrees, tail copied.
  double c1[] = {0}, s1[] = {1};
  rotary(x, c1, s1, 1, 1, 1, 4, 2, false, out);
  EXPECT_NEAR(out[0], -2);
  EXPECT_NEAR(out[1], 1);
  EXPECT_NEAR(out[2], 3);
  EXPECT_NEAR(out[3], 4);
  // Position t uses row t of cos/sin: T = 2, D = R = 2, 180 degrees at t = 1.
  double x2[] = {1, 2, 1, 2}, c2[] = {1, -1}, s2[] = {0, 0}, out2[4];
  rotary(x2, c2, s2, 1, 2, 1, 2, 2, false, out2);
  EXPECT_NEAR(out2[0], 1);
  EXPECT_NEAR(out2[1], 2);
  EXPECT_NEAR(out2[2], -1);
  EXPECT_NEAR(out2[3], -2);
}

void testCompare() {
  HostTensor t(DType::F32, {2});
  t.set(0, 3);
  t.set(1, 4.5);
  // error (0, 0.5), ref norm 5: rel 0.1.
  Comparison c = compare(t, {3, 4}, 0.2);
  EXPECT_NEAR(c.relL2, 0.1);
  EXPECT_NEAR(c.maxAbs, 0.5);
  EXPECT(c.pass);
  EXPECT(!compare(t, {3, 4}, 0.05).pass);
  t.set(1, NAN);
  c = compare(t, {3, 4}, 1);
  EXPECT(!c.pass && c.nonFinite == 1 && c.firstNonFinite == 1);
  EXPECT(toleranceFor({DType::F32, DType::BF16}) == 1e-2);
  EXPECT(toleranceFor({DType::F16, DType::F32}) == 2e-3);
  EXPECT(toleranceFor({DType::I32}) == 0);
}

void testPtxParams() {
  std::string ptx = ".visible .entry copy(\n"
                    "\t.param .u64 .ptr .global .align 16 copy_param_0,\n"
                    "\t.param .f32 copy_param_1,\n"
                    "\t.param .align 8 .b8 copy_param_2[16],\n"
                    "\t.param .u32 copy_param_3\n)\n{\n}\n"
                    ".visible .entry copy2()\n{\n}\n";
  std::vector<unsigned> bits;
  EXPECT(ptxEntryParams(ptx, "copy", bits) &&
         bits == std::vector<unsigned>({64, 32, 128, 32}));
  EXPECT(ptxEntryParams(ptx, "copy2", bits) && bits.empty());
  EXPECT(!ptxEntryParams(ptx, "cop", bits));
  size_t end = 0;
  EXPECT(ptxEntryParams(ptx, "copy2", bits, &end) &&
         ptxEntryBodyCloses(ptx, end));
  EXPECT(!ptxEntryBodyCloses(ptx.substr(0, end), end));
  EXPECT(!ptxEntryBodyCloses("{ { }", 0));
}

void testPtxComments() {
  // Comments become spaces (offsets kept); strings keep their slashes.
  std::string ptx = "a // .entry x(\n/* .entry y(\n */ .file 1 \"a//b\"\n";
  std::string code = stripPtxComments(ptx);
  EXPECT(code.size() == ptx.size());
  EXPECT(code.find(".entry") == std::string::npos);
  EXPECT(code.find("\"a//b\"") != std::string::npos);
  EXPECT(stripPtxComments("/* open") == "       ");
  // Static shared memory: sized declarations only, vectors and arrays.
  EXPECT(ptxStaticSharedBytes(".shared .align 16 .b8 a[4096];") == 4096);
  EXPECT(ptxStaticSharedBytes(".shared .f32 a[4][8], b[2];") == 136);
  EXPECT(ptxStaticSharedBytes(".shared .v4 .u32 v[2];") == 32);
  EXPECT(ptxStaticSharedBytes(".extern .shared .align 16 .b8 d[];") == 0);
  EXPECT(ptxStaticSharedBytes("{ st.shared.f32 [%r1], %f1; }") == 0);
  EXPECT(ptxStaticSharedBytes(".shared .b8 h[99999999999999999999];") ==
         int64_t(1) << 40);
}

/// stride(x, d) and align(x): names of a view's values, in one spelling.
void testViewNames() {
  Env env = {{"stride(x, 1)", 1}, {"stride(x, 0)", 24}, {"align(x)", 16}};
  EXPECT_VALUE("stride( x ,1 ) == 1 && stride(x, 0) % 8 == 0", 1, env);
  EXPECT_VALUE("align(x) >= 16", 1, env);
  EXPECT_ERROR("stride(y, 0)", "'stride(y, 0)' has no value", env);
  EXPECT_ERROR("stride(x)", "expected ',' and a dimension at column 9");
  EXPECT_ERROR("stride(x, d)", "expected a dimension (an integer below 1000)");
  EXPECT_ERROR("stride(1, 0)", "expected a tensor name at column 8");
  EXPECT_ERROR("align(x, 0)", "expected ')' at column 8");
  EXPECT_ERROR("strides(x, 0)", "(expected cdiv, min, max, stride or align)");
  Expr e;
  std::string error, tensor;
  int64_t dim = 0;
  EXPECT(Expr::parse("stride(qkv, 12) + align(qkv)", e, error) &&
         e.names() ==
             std::vector<std::string>({"stride(qkv, 12)", "align(qkv)"}));
  EXPECT(parseViewName("stride(qkv, 12)", tensor, dim) && tensor == "qkv" &&
         dim == 12);
  EXPECT(parseViewName("align(qkv)", tensor, dim) && dim == -1);
  EXPECT(!parseViewName("N", tensor, dim) &&
         !parseViewName("stride(x, y)", tensor, dim));
}

/// A variant over a view is chosen by its strides at binding and by its
/// address when known; packed pointers choose again (bindAddresses).
void testViewVariants() {
  auto bundleWith = [](const std::string &when, Bundle &b, std::string &error) {
    std::string text = R"({"kernel": "k", "entry": "k", "target": "sm_90a",
      "grid": ["1", "1", "1"], "threads": 128, "shared_bytes": 0,
      "size_vars": ["N"], "requires": [], "template": {},
      "params": [{"name": "x", "kind": "tensor", "dtype": "bf16",
                  "access": "read", "dims": ["N", "N"], "strided": true}],
      "variants": [{"name": "unit", "ptx": "k.unit.ptx", "shared_bytes": 0,
                    "when": [)" +
                       when + "]}]}";
    return parseBundleJson(text, "k.json", b, error);
  };
  Bundle b;
  std::string error;
  EXPECT(bundleWith(R"("stride(x, 0) % 8 == 0", "stride(x, 1) == 1",
                       "align(x) >= 16")",
                    b, error));
  EXPECT(!bundleWith(R"("stride(x, 2) == 1")", b, error) &&
         error.find("uses 'stride(x, 2)', but 'x' has 2 dimensions") !=
             std::string::npos);
  EXPECT(!bundleWith(R"("align(N) >= 16")", b, error) &&
         error.find("but 'N' is not a strided tensor parameter") !=
             std::string::npos);
  EXPECT(bundleWith(R"("stride(x, 0) % 8 == 0", "stride(x, 1) == 1",
                       "align(x) >= 16")",
                    b, error));
  BindingInputs in;
  in.dims = {{"N", 8}};
  LaunchPlan plan;
  // Row-major by default (rows 16 bytes apart), address not known yet: the
  // variant.
  EXPECT(bindAndCheck(b, in, plan, error) && plan.variant == 0 &&
         plan.env.at("align(x)") == kMaxAlign);
  in.strides["x"] = {1, 8}; // transposed
  EXPECT(bindAndCheck(b, in, plan, error) && plan.variant == -1);
  in.strides["x"] = {12, 1}; // rows 24 bytes apart
  EXPECT(bindAndCheck(b, in, plan, error) && plan.variant == -1);
  in.strides["x"] = {24, 1};
  in.addresses["x"] = 0x1008; // 8-byte aligned
  EXPECT(bindAndCheck(b, in, plan, error) && plan.variant == -1 &&
         plan.env.at("align(x)") == 8);
  in.addresses["x"] = 0x1010;
  EXPECT(bindAndCheck(b, in, plan, error) && plan.variant == 0);
  EXPECT(!bindAddresses(b, {0x2002}, plan) && plan.variant == -1);
  EXPECT(!bindAddresses(b, {0x2100}, plan) && plan.variant == 0 &&
         plan.env.at("align(x)") == kMaxAlign);
  EXPECT(bindAddresses(b, {0x2030}, plan) && plan.variant == 0);
}

void testStrides() {
  EXPECT(rowMajorStrides({3, 4, 5}) == std::vector<int64_t>({20, 5, 1}));
  EXPECT(viewSpan({3, 4}, {10, 2}) == 2 * 10 + 3 * 2 + 1);
  EXPECT(viewSpan({3, 0}, {10, 2}) == 0);
  // A 2 x 3 i32 tensor, column-major with a gap: offsets 0 2 4 / 1 3 5 + 7.
  HostTensor t(DType::I32, {2, 3});
  for (int64_t i = 0; i < 6; ++i)
    t.set(i, double(i + 10));
  std::vector<int64_t> strides = {1, 3};
  std::vector<uint8_t> fill = {0xA5, 0xA5, 0xA5, 0xA5};
  std::vector<uint8_t> spanned = scatterView(t, strides, fill);
  EXPECT(spanned.size() == 8 * 4);
  int32_t at3;
  std::memcpy(&at3, &spanned[3 * 4], 4);
  EXPECT(at3 == 11); // offset 3 holds element [0, 1]
  HostTensor back(DType::I32, {2, 3});
  std::string error;
  EXPECT(gatherView(spanned, strides, fill, "y", back, error) &&
         back.bytes == t.bytes);
  // A write into the gap at offset 2 is reported.
  spanned[2 * 4] = 0;
  EXPECT(!gatherView(spanned, strides, fill, "y", back, error) &&
         error == "output 'y': 1 elements between the elements of its view "
                  "(strides [1, 3]) were written (first at offset 2)");
  // Rows of 4 copied as runs, 5 apart, batches 20 apart: gaps at offsets
  // 4, 9, 14 and 15-19 keep the fill; a write to offset 17 is reported.
  HostTensor rows(DType::I32, {2, 3, 4});
  for (int64_t i = 0; i < rows.numel(); ++i)
    rows.set(i, double(i + 100));
  std::vector<int64_t> rowStrides = {20, 5, 1};
  spanned = scatterView(rows, rowStrides, fill);
  EXPECT(spanned.size() == 34 * 4);
  int32_t at;
  std::memcpy(&at, &spanned[26 * 4], 4);
  EXPECT(at == 117); // offset 26 = 20 + 5 + 1 holds element [1, 1, 1]
  std::memcpy(&at, &spanned[9 * 4], 4);
  EXPECT(at == int32_t(0xA5A5A5A5));
  HostTensor rowsBack(DType::I32, {2, 3, 4});
  EXPECT(gatherView(spanned, rowStrides, fill, "r", rowsBack, error) &&
         rowsBack.bytes == rows.bytes);
  spanned[17 * 4] = 0;
  EXPECT(!gatherView(spanned, rowStrides, fill, "r", rowsBack, error) &&
         error.find("first at offset 17") != std::string::npos);
  // Dense (a size-1 dimension's stride is free): the bytes as they are.
  std::vector<int64_t> denseStrides = {4, 99, 1};
  HostTensor dense(DType::I32, {3, 1, 4});
  for (int64_t i = 0; i < dense.numel(); ++i)
    dense.set(i, double(i));
  spanned = scatterView(dense, denseStrides, fill);
  EXPECT(spanned == dense.bytes);
  HostTensor denseBack(DType::I32, {3, 1, 4});
  EXPECT(gatherView(spanned, denseStrides, fill, "d", denseBack, error) &&
         denseBack.bytes == dense.bytes);
  // Aliasing: allowed when only read, refused when written.
  Param p;
  p.name = "y";
  p.dtype = DType::F32;
  p.access = Access::Read;
  EXPECT(checkView(p, {4, 8}, {0, 1}, error));
  p.access = Access::Write;
  EXPECT(!checkView(p, {4, 8}, {0, 1}, error));
  EXPECT(checkView(p, {4, 8}, {1, 4}, error));
  EXPECT(checkView(p, {1, 8}, {0, 1}, error)); // one row: nothing aliases
  EXPECT(!checkView(p, {4, 8}, {8, 2}, error));
  // A read view that aliases holds, per address, its last element: with
  // strides [1, 1], (0, 1) and (1, 0) share offset 1, (0, 2) and (1, 1)
  // offset 2.
  HostTensor a(DType::I32, {2, 3});
  for (int64_t i = 0; i < 6; ++i)
    a.set(i, double(i));
  EXPECT(mayAlias(a.shape, {1, 1}) && !mayAlias(a.shape, {3, 1}));
  resolveAliases(a, {1, 1});
  EXPECT(a.get(0) == 0 && a.get(1) == 3 && a.get(2) == 4 && a.get(3) == 3 &&
         a.get(4) == 4 && a.get(5) == 5);
  HostTensor b(DType::I32, {2, 3});
  for (int64_t i = 0; i < 6; ++i)
    b.set(i, double(i));
  resolveAliases(b, {int64_t(1) << 36, 1}); // no alias: unchanged
  EXPECT(b.get(1) == 1 && b.get(3) == 3);
}

void testHostSession() {
  std::map<std::string, std::string> files;
  std::string error;
  EXPECT(parseFileArgs({"x=a.npy", "y=b.npy"}, "--in", files, error) &&
         files.size() == 2 && files["y"] == "b.npy");
  EXPECT(!parseFileArgs({"x"}, "--in", files, error) &&
         error == "--in expects NAME=FILE.npy, got 'x'");
  EXPECT(!parseFileArgs({"x=c.npy"}, "--ref", files, error) &&
         error == "--ref names 'x' twice");
  // The seeds tile-run has always used: inputs reproduce across versions.
  EXPECT(tensorSeed(0, 0) == 0xd1b54a32d192ed03ull);
  EXPECT(tensorSeed(1, 1) == 0x9e3779b97f4a7c15ull + 2 * 0xd1b54a32d192ed03ull);

  HostSession session("");
  std::string text = R"json({"kernel": "copy", "entry": "copy",
    "target": "sm_80", "threads": 128, "shared_bytes": 0,
    "params": [
      {"name": "x", "kind": "tensor", "dtype": "f32", "dims": ["N"],
       "access": "read"},
      {"name": "y", "kind": "tensor", "dtype": "f32", "dims": ["N"],
       "access": "write"}],
    "size_vars": ["N"], "grid": ["cdiv(N, 128)", "1", "1"],
    "requires": [], "flops": null, "bytes": null})json";
  EXPECT(parseBundleJson(text, "copy.json", session.bundle, error));
  HostOptions options;
  options.dims = {"N=5"};
  options.seed = 3;
  options.check = true;
  EXPECT(session.bind(options, error));
  EXPECT(session.report.data["dims"]["N"] == 5);
  EXPECT(session.prepareHostTensors(error));
  EXPECT(session.dimsText() == " N=5");
  HostTensor x(DType::F32, {5});
  fillRandom(x, tensorSeed(3, 0));
  EXPECT(session.host.size() == 2 && session.host[0].bytes == x.bytes);
  int64_t first = -1;
  EXPECT(countPoison(session.host[1], first) == 5 && first == 0);
  // A run that copies x to y writes every element.
  auto copy = [&](size_t i, HostTensor &t, std::string &) {
    t = session.host[0];
    return i == 1;
  };
  EXPECT(session.collectOutputs(copy, error) && !session.failed);
  EXPECT(session.report.data["unwritten"]["y"]["count"] == 0);
  EXPECT(session.outputs.count("y") && session.outputs["y"].bytes == x.bytes);
  EXPECT(!session.checkOutputs("hint", error) &&
         error == "--check: no reference for any output; hint");
  EXPECT(session.report.finish(1) == 1 && session.report.data["ok"] == false &&
         session.report.text.find("\"ok\": false") != std::string::npos);
}
} // namespace

void testSha256() {
  // FIPS 180-4 examples: empty, one block, padding into a second block,
  // and a length past one block.
  EXPECT(sha256Hex("") ==
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT(sha256Hex("abc") ==
         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT(sha256Hex(std::string(1000000, 'a')) ==
         "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

void testBuckets() {
  Bundle b;
  b.sizeVars = {"M", "N"};
  Env env{{"M", 4096}, {"N", 100}};
  std::vector<int64_t> bucket = bucketOf(b, env);
  EXPECT(bucket == std::vector<int64_t>({4096, 128}));
  EXPECT(formatBucket(b, bucket) == "M=4096,N=128");
  env["M"] = 1;
  EXPECT(bucketOf(b, env)[0] == 1);
  env["M"] = INT32_MAX;
  EXPECT(bucketOf(b, env)[0] == (int64_t(1) << 31));
}

int main() {
  testSha256();
  testBuckets();
  testExpr();
  testConversions();
  testNpy();
  testFill();
  testAttention();
  testAttentionBackward();
  testAttentionCross();
  testLinearAttention();
  testRotary();
  testLayerNorm();
  testTraining();
  testGla();
  testVarlenAttention();
  testCompare();
  testPtxParams();
  testPtxComments();
  testStrides();
  testViewNames();
  testViewVariants();
  testHostSession();
  testBundleRoundTrip();
  testChips();
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
