//! Drawing a [`Figure`] with plotters: SVG (text stays text, for the HTML page)
//! and PNG (pixels, with the embedded DejaVu Sans so that no system font
//! library is needed).
//!
//! Numeric figures are lines with markers: solid with circles for results,
//! dashed with triangles for published figures, thin dashed horizontal lines for
//! reference machines. Category figures are horizontal grouped bars, since cipher
//! and system names are long. The legend is drawn beside the chart, never over it.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figures::{Figure, Origin, Scale, format_short, format_value};

/// The font used for all text: DejaVu Sans (licence in `fonts/LICENSE`).
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
/// The family name the font is registered under.
const FAMILY: &str = "sans-serif";

/// Why a figure could not be drawn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The embedded font was rejected.
    #[error("the embedded font could not be loaded")]
    Font,
    /// plotters failed to draw.
    #[error("drawing the figure '{figure}': {message}")]
    Draw {
        /// Which figure.
        figure: String,
        /// plotters' message.
        message: String,
    },
    /// The PNG encoder failed.
    #[error("encoding the PNG: {0}")]
    Png(#[from] png::EncodingError),
}

/// Tableau 10: distinct, and readable for the common colour-vision deficiencies.
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// Colour groups in order of first appearance: series first, then lines.
fn groups(fig: &Figure) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for g in fig
        .series
        .iter()
        .map(|s| s.group.as_str())
        .chain(fig.levels.iter().map(|l| l.group.as_str()))
    {
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

fn group_colour(fig: &Figure, group: &str) -> RGBColor {
    colour(groups(fig).iter().position(|g| *g == group).unwrap_or(0))
}

/// Dash (length, gap) of a reference line, by system: the study told its two
/// reference machines apart by line style.
fn dash(fig: &Figure, system: &str) -> (i32, i32) {
    const DASHES: [(i32, i32); 4] = [(3, 3), (10, 4), (16, 3), (6, 2)];
    let mut systems: Vec<&str> = Vec::new();
    for l in &fig.levels {
        if !systems.contains(&l.system.as_str()) {
            systems.push(&l.system);
        }
    }
    let i = systems.iter().position(|s| *s == system).unwrap_or(0);
    DASHES[i % DASHES.len()]
}

/// Registers the embedded font with plotters once; every drawing needs it
/// (the SVG backend measures text with it too).
fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

const CHART_WIDTH: u32 = 760;
const LEGEND_ROW: u32 = 18;
/// Size of label and legend text, pixels.
const TEXT_SIZE: u32 = 13;

/// Width of `text` in label type, pixels, measured with the embedded font.
fn text_width(text: &str) -> u32 {
    let measured = ensure_font()
        .ok()
        .and_then(|()| (FAMILY, TEXT_SIZE).into_font().box_size(text).ok());
    // Without the font (it is embedded, so only in theory), a generous guess.
    measured.map_or(text.chars().count() as u32 * 8, |(w, _)| w)
}

/// A legend line: text, colour, origin, and the dash pattern of a reference line.
type LegendEntry = (String, RGBColor, Origin, Option<(i32, i32)>);

fn legend_entries(fig: &Figure) -> Vec<LegendEntry> {
    let mut out: Vec<LegendEntry> = fig
        .series
        .iter()
        .map(|s| (s.name.clone(), group_colour(fig, &s.group), s.origin, None))
        .collect();
    out.extend(fig.levels.iter().map(|l| {
        (
            format!("{} = {}", l.name, format_short(l.value)),
            group_colour(fig, &l.group),
            Origin::Published,
            Some(dash(fig, &l.system)),
        )
    }));
    out
}

fn categories(fig: &Figure) -> Option<&[String]> {
    match &fig.x.scale {
        Scale::Categories(c) => Some(c),
        _ => None,
    }
}

/// Bars drawn in category `i` (the series with a point there).
fn bars_in(fig: &Figure, i: usize) -> Vec<(usize, f64)> {
    fig.series
        .iter()
        .enumerate()
        .filter_map(|(s, series)| {
            series
                .points
                .iter()
                .find(|p| p.0 == i as f64)
                .map(|p| (s, p.1))
        })
        .collect()
}

fn legend_width(fig: &Figure) -> u32 {
    let longest = legend_entries(fig)
        .iter()
        .map(|e| text_width(&e.0))
        .max()
        .unwrap_or(0);
    (longest + 50).clamp(160, 640)
}

fn category_label_width(fig: &Figure) -> u32 {
    let longest = categories(fig)
        .unwrap_or(&[])
        .iter()
        .map(|c| text_width(c))
        .max()
        .unwrap_or(0);
    (longest + 16).clamp(80, 640)
}

/// Width and height in pixels the figure is drawn at.
pub fn size(fig: &Figure) -> (u32, u32) {
    let legend = legend_entries(fig).len() as u32;
    let legend_height = 70 + legend * LEGEND_ROW;
    let chart_height = match categories(fig) {
        Some(c) => {
            let bars: u32 = (0..c.len())
                .map(|i| bars_in(fig, i).len().max(1) as u32 * 14 + 10)
                .sum();
            110 + bars
        }
        None => 480,
    };
    let width =
        CHART_WIDTH + legend_width(fig) + categories(fig).map_or(0, |_| category_label_width(fig));
    (width, chart_height.max(legend_height).max(320))
}

/// The figure as an SVG document.
pub fn svg(fig: &Figure) -> Result<String, PlotError> {
    ensure_font()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size(fig)).into_drawing_area();
        draw(&root, fig)?;
        root.present().map_err(|e| draw_error(fig, e))?;
    }
    Ok(out)
}

/// The figure as a PNG image.
pub fn png(fig: &Figure) -> Result<Vec<u8>, PlotError> {
    ensure_font()?;
    let (w, h) = size(fig);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root, fig)?;
        root.present().map_err(|e| draw_error(fig, e))?;
    }
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(bytes)
}

fn draw_error(fig: &Figure, e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw {
        figure: fig.kind.name().to_string(),
        message: e.to_string(),
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> Result<(), PlotError> {
    let e = |err: DrawingAreaErrorKind<DB::ErrorType>| draw_error(fig, err);
    root.fill(&WHITE).map_err(e)?;
    let (w, _) = root.dim_in_pixel();
    let (chart_area, legend_area) = root.split_horizontally(w - legend_width(fig));
    if categories(fig).is_some() {
        draw_bars(&chart_area, fig)?;
    } else {
        draw_lines(&chart_area, fig)?;
    }
    draw_legend(&legend_area, fig).map_err(e)
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let text = (FAMILY, TEXT_SIZE).into_font().color(&BLACK);
    let bars = categories(fig).is_some();
    for (i, (name, c, origin, level)) in legend_entries(fig).into_iter().enumerate() {
        let y = 50 + i as i32 * LEGEND_ROW as i32;
        let sample = [(4, y), (30, y)];
        match (level, origin) {
            (None, _) if bars => {
                let fill = if origin == Origin::Measured {
                    c.filled()
                } else {
                    c.mix(0.55).filled()
                };
                area.draw(&Rectangle::new([(4, y - 5), (30, y + 5)], fill))?
            }
            (Some((len, gap)), _) => {
                area.draw(&DashedPathElement::new(sample, len, gap, c.stroke_width(2)))?
            }
            (None, Origin::Measured) => {
                area.draw(&PathElement::new(sample, c.stroke_width(2)))?;
                area.draw(&Circle::new((17, y), 3, c.filled()))?
            }
            (None, Origin::Published) => {
                area.draw(&DashedPathElement::new(sample, 6, 4, c.stroke_width(2)))?;
                area.draw(&TriangleMarker::new((17, y), 5, c.filled()))?
            }
        }
        area.draw(&Text::new(
            name,
            (36, y),
            text.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// Axis labels: whole numbers without decimals.
fn tick(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{v:.0}")
    } else if v.abs() < 1.0 && v != 0.0 {
        // Log-axis ticks (0.001, 0.01, 0.1): no trailing zeros.
        let text = format!("{v:.6}");
        text.trim_end_matches('0').to_string()
    } else {
        format_value(v)
    }
}

fn y_max(fig: &Figure) -> f64 {
    let m = fig
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(fig.levels.iter().map(|l| l.value))
        .fold(0.0_f64, f64::max);
    if m > 0.0 { m * 1.1 } else { 1.0 }
}

fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), PlotError> {
    let xs: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| fig.x.scale != Scale::Log || *x > 0.0)
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let (lo, hi) = if xs.is_empty() { (1.0, 2.0) } else { (lo, hi) };
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&fig.title, (FAMILY, 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70);
    let y = 0.0..y_max(fig);
    // Figures whose values span decades (seconds for 1 MB on a desktop against
    // 128 MB on a Pi) get a logarithmic y axis, else the small ones vanish.
    let log_y = (fig.y.scale == Scale::Log).then(|| y_positive_range(fig));
    let (x_log, x_lin) = {
        let lo_lin = if lo >= 0.0 { 0.0 } else { lo };
        let pad = ((hi - lo_lin) * 0.05).max(1.0);
        ((lo / 1.6, hi * 1.6), (lo_lin, hi + pad))
    };
    let e = |err| draw_error(fig, err);
    match (fig.x.scale == Scale::Log, log_y) {
        (true, Some((y0, y1))) => {
            let chart = builder
                .build_cartesian_2d((x_log.0..x_log.1).log_scale(), (y0..y1).log_scale())
                .map_err(e)?;
            series_on(chart, fig, x_log)
        }
        (true, None) => {
            let chart = builder
                .build_cartesian_2d((x_log.0..x_log.1).log_scale(), y)
                .map_err(e)?;
            series_on(chart, fig, x_log)
        }
        (false, Some((y0, y1))) => {
            let chart = builder
                .build_cartesian_2d(x_lin.0..x_lin.1, (y0..y1).log_scale())
                .map_err(e)?;
            series_on(chart, fig, x_lin)
        }
        (false, None) => {
            let chart = builder.build_cartesian_2d(x_lin.0..x_lin.1, y).map_err(e)?;
            series_on(chart, fig, x_lin)
        }
    }
}

/// The y range of a logarithmic axis: the positive values, with a margin.
fn y_positive_range(fig: &Figure) -> (f64, f64) {
    let (lo, hi) = fig
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(fig.levels.iter().map(|l| l.value))
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if lo.is_finite() {
        (lo / 2.0, hi * 2.0)
    } else {
        (0.1, 1.0)
    }
}

fn series_on<DB: DrawingBackend, X, Y>(
    mut chart: ChartContext<'_, DB, Cartesian2d<X, Y>>,
    fig: &Figure,
    (x0, x1): (f64, f64),
) -> Result<(), PlotError>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let e = |err: DrawingAreaErrorKind<DB::ErrorType>| draw_error(fig, err);
    let label = (FAMILY, TEXT_SIZE).into_font();
    chart
        .configure_mesh()
        .x_desc(fig.x.title())
        .y_desc(fig.y.title())
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(label.clone())
        .axis_desc_style(label)
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(e)?;
    for s in &fig.series {
        let c = group_colour(fig, &s.group);
        let points: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| fig.x.scale != Scale::Log || p.0 > 0.0)
            .filter(|p| fig.y.scale != Scale::Log || p.1 > 0.0)
            .collect();
        match s.origin {
            Origin::Measured => {
                chart
                    .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                    .map_err(e)?;
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 4, c.filled())))
                    .map_err(e)?;
            }
            Origin::Published => {
                chart
                    .draw_series(DashedLineSeries::new(
                        points.clone(),
                        6,
                        4,
                        c.stroke_width(2),
                    ))
                    .map_err(e)?;
                chart
                    .draw_series(
                        points
                            .iter()
                            .map(|&p| TriangleMarker::new(p, 6, c.filled())),
                    )
                    .map_err(e)?;
            }
        }
    }
    for level in &fig.levels {
        let c = group_colour(fig, &level.group);
        let (len, gap) = dash(fig, &level.system);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, level.value), (x1, level.value)],
                len,
                gap,
                c.stroke_width(1),
            ))
            .map_err(e)?;
    }
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), PlotError> {
    let e = |err: DrawingAreaErrorKind<DB::ErrorType>| draw_error(fig, err);
    let cats = categories(fig).unwrap_or(&[]);
    let n = cats.len().max(1) as f64;
    // Room on the right for the value printed after each bar.
    let x_max = y_max(fig) * 1.12;
    let mut chart = ChartBuilder::on(area)
        .caption(&fig.title, (FAMILY, 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(category_label_width(fig))
        .build_cartesian_2d(0.0..x_max, 0.0..n)
        .map_err(e)?;
    let label = (FAMILY, TEXT_SIZE).into_font();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(fig.y.title())
        .x_label_formatter(&|v| tick(*v))
        .label_style(label.clone())
        .axis_desc_style(label.clone())
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(e)?;
    for (i, name) in cats.iter().enumerate() {
        // The first category at the top.
        let band = n - 1.0 - i as f64;
        let bars = bars_in(fig, i);
        let k = bars.len().max(1) as f64;
        for (j, (s, v)) in bars.iter().enumerate() {
            // Series in legend order from the top of the band down.
            let y1 = band + 0.9 - j as f64 * 0.8 / k;
            let y0 = y1 - 0.8 / k;
            let c = group_colour(fig, &fig.series[*s].group);
            let style = match fig.series[*s].origin {
                Origin::Measured => c.filled(),
                Origin::Published => c.mix(0.55).filled(),
            };
            chart
                .draw_series([Rectangle::new([(0.0, y0), (*v, y1)], style)])
                .map_err(e)?;
            chart
                .draw_series([Text::new(
                    format!(" {}", format_short(*v)),
                    (*v, (y0 + y1) / 2.0),
                    label
                        .clone()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                )])
                .map_err(e)?;
        }
        let (px, py) = chart.backend_coord(&(0.0, band + 0.5));
        let (ax, ay) = area.get_base_pixel();
        area.draw(&Text::new(
            name.clone(),
            (px - ax - 8, py - ay),
            label
                .clone()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{FigureKind, build_all, tests::results};
    use crate::reference::load;

    #[test]
    fn every_figure_draws_as_svg_and_png() {
        let refs = load(&[
            "cluster-study".into(),
            "tea-cluster".into(),
            "iot-pi3".into(),
            "power".into(),
            "hpl".into(),
            "pi4-cryptsetup".into(),
        ])
        .unwrap();
        let figs = build_all(&results("bench-host"), &refs);
        assert_eq!(figs.len(), FigureKind::ALL.len());
        for fig in &figs {
            let svg = svg(fig).unwrap();
            let doc = roxmltree::Document::parse(&svg)
                .unwrap_or_else(|err| panic!("{}: {err}", fig.kind.name()));
            let texts: Vec<&str> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text())
                .map(str::trim)
                .collect();
            for s in &fig.series {
                assert!(
                    texts.contains(&s.name.as_str()),
                    "{}: no legend entry for {}",
                    fig.kind.name(),
                    s.name
                );
            }
            assert!(texts.contains(&fig.title.as_str()));
            let png = png(fig).unwrap();
            let decoder = ::png::Decoder::new(std::io::Cursor::new(png));
            let reader = decoder.read_info().unwrap();
            let info = reader.info();
            assert_eq!((info.width, info.height), size(fig), "{}", fig.kind.name());
        }
    }

    #[test]
    fn png_has_text_pixels_from_the_embedded_font() {
        let figs = build_all(&results("h"), &load(&["nuc".into()]).unwrap());
        let bytes = png(&figs[0]).unwrap();
        let mut reader = ::png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        // The title is black text on white at the top: some dark pixels in the first 30 rows.
        let (w, _) = size(&figs[0]);
        let top = &buf[..w as usize * 3 * 30];
        assert!(top.chunks(3).any(|p| p.iter().all(|&c| c < 80)));
    }
}
