// The three numeric tiers of docs/NUMERICS.md. A stronger tier may serve a
// weaker request, never the reverse: Identical > Deterministic > Fast.
#pragma once
#include <string>

#include "twinlearn/core/error.hpp"

namespace tl {

enum class NumericMode : int { Fast = 0, Deterministic = 1, Identical = 2 };

inline const char* to_string(NumericMode m) {
  switch (m) {
    case NumericMode::Fast: return "fast";
    case NumericMode::Deterministic: return "deterministic";
    case NumericMode::Identical: return "identical";
  }
  return "?";
}

inline NumericMode parse_numeric_mode(const std::string& s) {
  if (s == "fast") return NumericMode::Fast;
  if (s == "deterministic") return NumericMode::Deterministic;
  if (s == "identical") return NumericMode::Identical;
  throw ValueError("numeric_mode must be one of 'fast', 'deterministic', 'identical'; got '" + s + "'");
}

// True when delivering `delivered` satisfies a request for `requested`.
inline bool satisfies(NumericMode delivered, NumericMode requested) {
  return static_cast<int>(delivered) >= static_cast<int>(requested);
}

}  // namespace tl
