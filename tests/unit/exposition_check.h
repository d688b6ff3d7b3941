// A strict reader of the Prometheus text format (0.0.4), for the tests: what
// promtool check metrics would refuse, it refuses too (Debian's prometheus
// package, which has promtool, is a 96 MB server: not a build dependency).
#ifndef CHORUS_TESTS_UNIT_EXPOSITION_CHECK_H_
#define CHORUS_TESTS_UNIT_EXPOSITION_CHECK_H_

#include <string>

namespace chorus::test {

// The first problem found in text, or "" if it is well formed: syntax of
// comments, names, labels (escapes) and values; a TYPE before a family's
// samples, each family once and contiguous; no series twice; histograms
// with ascending le, cumulative counts, a +Inf bucket equal to _count, and
// _sum.
std::string CheckExposition(const std::string& text);

}  // namespace chorus::test

#endif  // CHORUS_TESTS_UNIT_EXPOSITION_CHECK_H_
