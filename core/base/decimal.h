// Decimal numbers as text, for inputs a person types (a CSV matrix, a command-line value):
// only [+-]digits[.digits][e[+-]digits] is a number. strtod's other forms (hexadecimal "0x10",
// "inf", "nan", "0x1p3") are refused, so "0x10" is never read as 16.
// Torch-free.
#pragma once
#include <string>

namespace attn {

// Parses the whole of `text` (no surrounding spaces) as a finite decimal double. On failure
// returns false and sets `why`: "is not a decimal number", "is not finite" (inf, nan), "is
// hexadecimal; write it in decimal", "is out of range (overflows; the largest magnitude is
// about 1.8e308)", "is out of range (underflows to 0; write 0 if that is meant)". A value in the
// subnormal range (e.g. 1e-310) is accepted as it rounds.
bool parse_decimal(const std::string& text, double& out, std::string& why);

// `v` with exactly `digits` digits after the point ("%.*f"), for figure titles and tables.
std::string fixed_decimal(double v, int digits);

}  // namespace attn
