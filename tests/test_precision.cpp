// The scalar list and its traits (tessera/precision.hpp): every listed type has traits that
// agree with each other, and the letters read back as the precisions they came from.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "tessera/precision.hpp"

namespace tessera {
namespace {

static_assert(precision_of<float>() == Precision::single_real);
static_assert(precision_of<double>() == Precision::double_real);
static_assert(lapack_letter(Precision::single_real) == 's');
static_assert(lapack_letter(Precision::double_real) == 'd');
static_assert(bytes_per_element(Precision::double_real) == sizeof(double));
static_assert(lapack_letter(Precision::single_complex) == 'c');
static_assert(lapack_letter(Precision::double_complex) == 'z');
static_assert(bytes_per_element(Precision::double_complex) == 2 * sizeof(double));
static_assert(std::is_same_v<RealOf<std::complex<float>>, float> && kIsComplex<std::complex<double>> && !kIsComplex<double>);

template <class T>
void expect_consistent_traits(std::vector<Precision>& seen) {
  const Precision p = precision_of<T>();
  seen.push_back(p);
  EXPECT_EQ(bytes_per_element(p), sizeof(T));
  EXPECT_EQ(lapack_letter(p), ScalarTraits<T>::letter);
  EXPECT_EQ(std::string(scalar_name(p)), ScalarTraits<T>::name);
  EXPECT_EQ(is_complex(p), ScalarTraits<T>::is_complex);
  EXPECT_TRUE((std::is_same_v<typename ScalarTraits<T>::real_type, T>) || ScalarTraits<T>::is_complex);
  Precision back{};
  EXPECT_TRUE(precision_from_letter(ScalarTraits<T>::letter, &back));
  EXPECT_EQ(back, p);
  const bool same = with_scalar_type(p, [](auto x) { return std::is_same_v<decltype(x), T>; });
  EXPECT_TRUE(same);
}

TEST(Precision, EveryListedScalarHasConsistentTraits) {
  std::vector<Precision> seen;
#define TESSERA_CHECK(T) expect_consistent_traits<T>(seen);
  TESSERA_FOR_EACH_SCALAR(TESSERA_CHECK)
#undef TESSERA_CHECK
  EXPECT_EQ(seen, std::vector<Precision>(std::begin(kPrecisions), std::end(kPrecisions)));
  // The real list is the scalar list's real types, in its order.
  std::vector<Precision> real;
  for (Precision p : kPrecisions)
    if (!is_complex(p)) real.push_back(p);
  EXPECT_EQ(real, std::vector<Precision>(std::begin(kRealPrecisions), std::end(kRealPrecisions)));
}

TEST(Precision, LettersOutsideTheListNameNoPrecision) {
  Precision p = Precision::double_real;
  for (const char c : {'S', 'D', 'C', 'Z', 'x', ' ', '\0'}) EXPECT_FALSE(precision_from_letter(c, &p)) << int(c);
  EXPECT_EQ(p, Precision::double_real);  // untouched
}

}  // namespace
}  // namespace tessera
