//! The examples' charts: one place that sets up plotters' text and draws a
//! chart with axes, tick labels, axis labels, a title and a legend that
//! names every series.
//!
//! Text goes through plotters' `ab_glyph` feature with DejaVu Sans compiled
//! in from the `dejavu` crate ([`fonts`]), so a machine without system
//! fonts (a fresh container, CI) draws the same labels. An example writes
//! `mod plot;` and describes its chart as a [`Chart`] of [`Series`];
//! `tests/plots.rs` renders charts in memory and checks their pixels.

// Each example compiles this module and uses the part it needs.
#![allow(dead_code)]

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

/// The error of drawing or writing a chart.
pub type Error = Box<dyn std::error::Error>;

/// The font family every text of a chart uses (plotters' default name).
const FAMILY: &str = "sans-serif";
/// Text sizes in pixels: title, axis labels, tick labels and legend.
const TITLE_SIZE: u32 = 24;
const AXIS_SIZE: u32 = 18;
const TICK_SIZE: u32 = 15;
/// Room for the tick labels plus the axis label below and left of the axes.
const X_AREA: u32 = 56;
const Y_AREA: u32 = 76;

/// Registers DejaVu Sans (regular and bold) as plotters' `sans-serif`, once
/// per process; every later call returns the first call's result.
pub fn fonts() -> Result<(), Error> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let faces = [
                (FontStyle::Normal, dejavu::sans::regular()),
                (FontStyle::Bold, dejavu::sans::bold()),
            ];
            for (style, bytes) in faces {
                register_font(FAMILY, style, bytes).map_err(|_| {
                    format!(
                        "plotters cannot read the {} face of the `dejavu` crate's DejaVu Sans",
                        style.as_str()
                    )
                })?;
            }
            Ok(())
        })
        .clone()
        .map_err(Into::into)
}

/// What a series draws: a polyline through its points, or one dot.
pub enum Shape {
    /// A line through the points, in order.
    Line(Vec<(f64, f64)>),
    /// A filled circle at a point; the series' width is its radius.
    Dot((f64, f64)),
}

/// One named thing on a chart: its legend entry shows `name` beside a
/// sample of its line or dot.
pub struct Series {
    /// The legend's text for it.
    pub name: String,
    /// What it draws.
    pub shape: Shape,
    /// Its colour (with alpha).
    pub color: RGBAColor,
    /// Line width in pixels, or a dot's radius.
    pub width: u32,
}

impl Series {
    /// A line through `points`.
    pub fn line(
        name: impl Into<String>,
        points: impl IntoIterator<Item = (f64, f64)>,
        color: impl Color,
        width: u32,
    ) -> Series {
        Series {
            name: name.into(),
            shape: Shape::Line(points.into_iter().collect()),
            color: color.to_rgba(),
            width,
        }
    }

    /// A dot of radius `radius` pixels at `at`.
    pub fn dot(name: impl Into<String>, at: (f64, f64), color: impl Color, radius: u32) -> Series {
        Series {
            name: name.into(),
            shape: Shape::Dot(at),
            color: color.to_rgba(),
            width: radius,
        }
    }
}

/// A chart: title, axis labels (with units), the data ranges, where the
/// legend sits and the series, drawn in order.
pub struct Chart {
    /// The title, above the plot.
    pub title: String,
    /// The horizontal axis' label, below the tick labels.
    pub x_label: String,
    /// The vertical axis' label, left of the tick labels (rotated).
    pub y_label: String,
    /// The horizontal data range.
    pub x: Range<f64>,
    /// The vertical data range.
    pub y: Range<f64>,
    /// The legend's corner or edge inside the plot.
    pub legend: SeriesLabelPosition,
    /// What the chart shows.
    pub series: Vec<Series>,
}

/// Where a drawn chart's plotting area lies in pixels, to map data points
/// onto the image (tests use it to find the regions around the axes).
pub struct Frame {
    /// The plotting area's columns.
    pub columns: Range<i32>,
    /// The plotting area's rows (top to bottom).
    pub rows: Range<i32>,
    x: Range<f64>,
    y: Range<f64>,
}

impl Frame {
    /// The pixel (column, row) of a data point, as the chart maps it (to
    /// within a pixel of rounding).
    pub fn pixel(&self, (x, y): (f64, f64)) -> (i32, i32) {
        let along = |v: f64, data: &Range<f64>, px: &Range<i32>, flip: bool| {
            let mut t = (v - data.start) / (data.end - data.start);
            if flip {
                t = 1.0 - t;
            }
            px.start + (t * f64::from(px.end - px.start - 1)).round() as i32
        };
        (
            along(x, &self.x, &self.columns, false),
            along(y, &self.y, &self.rows, true),
        )
    }
}

impl Chart {
    /// Draws the chart on `root` (which it fills white first) and returns
    /// where its plotting area lies.
    pub fn draw<DB>(&self, root: &DrawingArea<DB, Shift>) -> Result<Frame, Error>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
    {
        fonts()?;
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(root)
            .margin(14)
            .caption(&self.title, (FAMILY, TITLE_SIZE, FontStyle::Bold))
            .x_label_area_size(X_AREA)
            .y_label_area_size(Y_AREA)
            .build_cartesian_2d(self.x.clone(), self.y.clone())?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style((FAMILY, AXIS_SIZE))
            .label_style((FAMILY, TICK_SIZE))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .draw()?;
        for series in &self.series {
            let style = ShapeStyle {
                color: series.color,
                filled: true,
                stroke_width: series.width,
            };
            match &series.shape {
                Shape::Line(points) => chart
                    .draw_series(LineSeries::new(points.iter().copied(), style))?
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style)),
                Shape::Dot(at) => chart
                    .draw_series([Circle::new(*at, series.width, style)])?
                    .legend(move |(x, y)| Circle::new((x + 12, y), style.stroke_width, style)),
            }
            .label(&series.name);
        }
        chart
            .configure_series_labels()
            .position(self.legend.clone())
            .label_font((FAMILY, TICK_SIZE))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .margin(12)
            .draw()?;
        let (columns, rows) = chart.plotting_area().get_pixel_range();
        Ok(Frame {
            columns,
            rows,
            x: self.x.clone(),
            y: self.y.clone(),
        })
    }

    /// Draws the chart into a PNG of `size` (width, height) pixels at `path`.
    pub fn save_png(&self, path: impl AsRef<Path>, size: (u32, u32)) -> Result<(), Error> {
        let root = BitMapBackend::new(path.as_ref(), size).into_drawing_area();
        self.draw(&root)?;
        root.present()?;
        Ok(())
    }
}

/// A tick label: no trailing `.0` on whole numbers, at most three decimals
/// otherwise.
fn tick(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

/// The points of `path` up to where it first goes below `floor`, ending on
/// the crossing (linearly interpolated between the samples either side):
/// a flight stopped at the ground instead of drawn along the chart's edge.
/// A path that starts below `floor` gives no points.
pub fn clip_below(path: &[(f64, f64)], floor: f64) -> Vec<(f64, f64)> {
    let mut kept = Vec::with_capacity(path.len());
    for &(x, y) in path {
        if y < floor {
            if let Some(&(px, py)) = kept.last()
                && py > floor
            {
                let t = (py - floor) / (py - y);
                kept.push((px + t * (x - px), floor));
            }
            break;
        }
        kept.push((x, y));
    }
    kept
}
