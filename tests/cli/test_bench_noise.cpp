// The overload check of the benchmarks: fractions of the copy reference that no kernel can
// reach are not printed, and the run says why.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "bench.hpp"
#include "bench_util.hpp"

namespace tb = tessera::bench;

TEST(BenchNoise, FractionsBelowTheReferenceArePrinted) {
  std::ostringstream discard;
  tb::report_noise(discard);  // start from a clean log
  EXPECT_EQ(tb::percent_of(50, 100), "50");
  EXPECT_EQ(tb::percent_of(87.26, 100, 1), "87.3");
  // up to kFasterThanCopy (1.2) above the reference: timer jitter, still a fraction
  EXPECT_EQ(tb::percent_of(115, 100), "115");
  EXPECT_EQ(tb::with_percent(tb::percent_of(50, 100)), "50%");
  std::ostringstream out;
  EXPECT_FALSE(tb::report_noise(out));
  EXPECT_EQ(out.str(), "");
}

TEST(BenchNoise, FasterThanTheReferenceIsReportedNotPrinted) {
  std::ostringstream discard;
  tb::report_noise(discard);
  EXPECT_EQ(tb::percent_of(275, 100), "noisy");
  EXPECT_EQ(tb::percent_of(364, 100, 1), "noisy");
  EXPECT_EQ(tb::with_percent("noisy"), "noisy");
  std::ostringstream out;
  EXPECT_TRUE(tb::report_noise(out));
  EXPECT_NE(out.str().find("machine overloaded/noisy: 2 results ran faster than the copy reference"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("up to 3.6 times its bandwidth"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find('%'), std::string::npos) << "no percentage above 100: " << out.str();
  // the log starts again after a report
  std::ostringstream again;
  EXPECT_FALSE(tb::report_noise(again));
}

TEST(BenchNoise, NeverInfOrNan) {
  std::ostringstream discard;
  tb::report_noise(discard);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(tb::percent_of(inf, 100), "n/a");  // a time of zero
  EXPECT_EQ(tb::percent_of(1, 0), "n/a");
  EXPECT_EQ(tb::percent_of(nan, 100), "n/a");
  EXPECT_EQ(tb::percent_of(1, inf), "n/a");
  std::ostringstream out;
  EXPECT_FALSE(tb::report_noise(out));  // not an overload: a note only
  EXPECT_NE(out.str().find("4 fractions could not be computed"), std::string::npos) << out.str();
}
