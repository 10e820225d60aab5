// Exporting a Figure: PDF and PNG drawn by cairo (FreeType font, embedded as a TrueType subset in
// PDFs; PNGs carry their dpi in a pHYs chunk), SVG written directly so that text stays real
// <text> and heatmaps are embedded PNG images drawn with pixelated sampling, and the figure's
// data as CSV. Beside every export go the data CSV and a JSON sidecar (provenance).
// Contract:
//  - validate() checks a request before anything is drawn and throws FigureError naming the
//    field and its allowed range: dpi 30..2400, width_in 1..20, height_in 0 (the figure's
//    natural height at that width) or 0.5..20, font_pt 4..24, a path whose directory exists.
//  - export_figure() writes every file to a temporary sibling and renames it into place only
//    when all of them were written, so a failure leaves no partial file behind and never
//    replaces a good export with a broken one. Returns the files written.
//  - The CSV is long-format, one row per value:
//    figure,panel,title,series,kind,i,j,x,y,value,step,layer,head,query,key,weight.
//    kind is line | scatter | polygon | heatmap; heatmap rows give i = row, j = col, value (of
//    the whole matrix when the heatmap is a cut of one: Heatmap::first_row, first_col);
//    the others give i = point index, x, y. step is Panel::step, else Figure::step (empty when both
//    are -1); an attention map's cells (Heatmap::layer >= 0) also give layer, head, query (= i),
//    key (= j) and weight
//    (= value). Values are printed with 9 significant digits, so a float reads back exactly.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "render/plot/figure.h"
#include "render/plot/figure_font.h"

namespace attn::fig {

enum class ExportFormat { Pdf, Svg, Png, Csv };
const char* to_string(ExportFormat f);  // "pdf", ...
bool parse_export_format(const std::string& s, ExportFormat& out);

// Where the figure came from (the JSON sidecar).
struct Provenance {
  std::string program_version;
  std::string run_id;       // run directory name, or "live"
  std::string config_hash;  // hex digest of the resolved config
  uint64_t seed = 0;
  int64_t step = -1;
  std::string mechanism;
  std::string date;  // ISO 8601 UTC; empty: now
};

struct ExportRequest {
  ExportFormat format = ExportFormat::Pdf;
  std::string path;       // the figure file; the CSV and JSON go beside it (same stem)
  double width_in = 3.5;  // 3.5 single column, 7.0 full width
  double height_in = 0;   // 0: the figure's natural height (page_for)
  double font_pt = 8;
  int dpi = 300;          // PNG only
  bool dark = false;      // exports use the light theme unless asked
  std::string font_file;  // empty: default_font_path()
  bool sidecars = true;   // also write <stem>.csv and <stem>.json
};

struct ExportResult {
  std::vector<std::string> files;
  std::string font_family, font_file;
};

void validate(const ExportRequest& request);
ExportResult export_figure(const Figure& figure, const ExportRequest& request,
                           const Provenance& provenance);

// The page a request asks for (points): height_in, or when it is 0 the figure's natural height
// at that width (natural_height(), render/plot/figure_draw.h), measured with the export's font.
Page page_for(const Figure& figure, const ExportRequest& request, const TextMetrics& metrics);
// The figure's data as CSV text.
std::string figure_csv(const Figure& figure);

// Encodes RGBA8 pixels as PNG with a pHYs chunk for `dpi` (0: none) through
// render/plot/export/png.h. Throws FigureError.
std::string encode_png(const std::vector<render::Rgba8>& rgba, int width, int height, int dpi);

// Writes `files` (path -> contents) all-or-nothing with attn::write_files_atomic
// (core/base/atomic_file.h). Throws FigureError naming the path that failed.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace attn::fig
