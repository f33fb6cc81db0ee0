//! The examples' shared plotting module (`examples/plot/mod.rs`), rendered
//! into memory: each text of a chart (title, axis labels, tick labels,
//! legend) puts dark pixels where it belongs, and a path clipped at the
//! ground never reaches below it.

#[path = "../plot/mod.rs"]
mod plot;

use plot::{Chart, Frame, Series};
use plotters::prelude::*;

const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;
/// The colour of the test's data, found again in the pixels.
const DATA: RGBColor = RGBColor(200, 0, 200);

/// An RGB image as plotters' bitmap backend writes it.
struct Image(Vec<u8>);

impl Image {
    fn rgb(&self, column: i32, row: i32) -> [u8; 3] {
        let i = 3 * (row as usize * WIDTH as usize + column as usize);
        [self.0[i], self.0[i + 1], self.0[i + 2]]
    }

    /// Text (black, anti-aliased) and axis lines: every channel dark.
    fn ink(&self, column: i32, row: i32) -> bool {
        self.rgb(column, row).iter().all(|&c| c < 110)
    }

    /// The pixels in `columns` x `rows` where `pick` holds.
    fn count(
        &self,
        columns: std::ops::Range<i32>,
        rows: std::ops::Range<i32>,
        pick: impl Fn(i32, i32) -> bool,
    ) -> usize {
        rows.flat_map(|r| columns.clone().map(move |c| (c, r)))
            .filter(|&(c, r)| pick(c, r))
            .count()
    }
}

fn render(chart: &Chart) -> (Image, Frame) {
    let mut rgb = vec![0; (3 * WIDTH * HEIGHT) as usize];
    let frame = {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        let frame = chart.draw(&root).expect("the chart draws");
        root.present().expect("the buffer is written");
        frame
    };
    (Image(rgb), frame)
}

/// A chart whose data keep to the lower left quarter of the plot.
fn chart() -> Chart {
    Chart {
        title: "Title of the test chart".into(),
        x_label: "time t (s)".into(),
        y_label: "height y (m)".into(),
        x: 0.0..10.0,
        y: 0.0..10.0,
        legend: SeriesLabelPosition::UpperRight,
        series: vec![Series::line(
            "the data series",
            [(0.5, 0.5), (2.0, 3.0), (4.0, 1.0)],
            DATA,
            2,
        )],
    }
}

/// The pixels that differ between two renders with the same plotting area.
fn changed(a: &(Image, Frame), b: &(Image, Frame)) -> Vec<(i32, i32)> {
    assert_eq!(
        (&a.1.columns, &a.1.rows),
        (&b.1.columns, &b.1.rows),
        "a text's absence moved the plotting area"
    );
    let mut out = Vec::new();
    for r in 0..HEIGHT as i32 {
        for c in 0..WIDTH as i32 {
            if a.0.rgb(c, r) != b.0.rgb(c, r) {
                out.push((c, r));
            }
        }
    }
    out
}

/// Renders `chart()` with and without one text and checks that the text
/// drew dark pixels, all of them where `belongs` says.
fn text_draws(blank: impl Fn(&mut Chart), what: &str, belongs: impl Fn(&Frame, i32, i32) -> bool) {
    let full = render(&chart());
    let mut without = chart();
    blank(&mut without);
    let bare = render(&without);
    let diff = changed(&full, &bare);
    let inked = diff.iter().filter(|&&(c, r)| full.0.ink(c, r)).count();
    assert!(
        inked >= 40,
        "the {what} drew {inked} dark pixels (of {} changed)",
        diff.len()
    );
    let stray: Vec<_> = diff
        .iter()
        .filter(|&&(c, r)| !belongs(&full.1, c, r))
        .collect();
    assert!(
        stray.is_empty(),
        "the {what} changed pixels outside its place: {:?}",
        &stray[..stray.len().min(5)]
    );
}

#[test]
fn the_title_is_text_above_the_plot() {
    text_draws(|c| c.title.clear(), "title", |f, _, r| r < f.rows.start);
}

#[test]
fn the_x_axis_label_is_text_below_the_plot() {
    text_draws(
        |c| c.x_label.clear(),
        "x axis label",
        |f, c, r| r >= f.rows.end && c >= f.columns.start - 20 && c < f.columns.end,
    );
}

#[test]
fn the_y_axis_label_is_text_left_of_the_plot() {
    text_draws(
        |c| c.y_label.clear(),
        "y axis label",
        |f, c, r| c < f.columns.start && r >= f.rows.start && r < f.rows.end + 20,
    );
}

#[test]
fn the_axes_carry_tick_labels() {
    // Past the tick marks and short of the axis labels: the tick labels'
    // band below the x axis and left of the y axis.
    let (image, f) = render(&chart());
    let below = image.count(
        f.columns.clone(),
        f.rows.end + 8..f.rows.end + 28,
        |c, r| image.ink(c, r),
    );
    let left = image.count(
        f.columns.start - 40..f.columns.start - 8,
        f.rows.clone(),
        |c, r| image.ink(c, r),
    );
    assert!(below >= 100, "{below} dark pixels under the x axis");
    assert!(left >= 100, "{left} dark pixels left of the y axis");
}

#[test]
fn the_legend_names_each_series_with_its_colour() {
    // The data keep to the lower left; the upper right quarter shows the
    // legend: the series' sample line in its colour and its name in ink.
    let (image, f) = render(&chart());
    let columns = (f.columns.start + f.columns.end) / 2..f.columns.end;
    let rows = f.rows.start..(f.rows.start + f.rows.end) / 2;
    let swatch = image.count(columns.clone(), rows.clone(), |c, r| {
        image.rgb(c, r) == [DATA.0, DATA.1, DATA.2]
    });
    let text = image.count(columns, rows, |c, r| image.ink(c, r));
    assert!(
        swatch >= 20,
        "{swatch} pixels of the series' colour in the legend"
    );
    assert!(
        text >= 100,
        "{text} dark pixels of the series' name in the legend"
    );
}

#[test]
fn frame_maps_data_to_the_pixels_drawn() {
    let mut dot = chart();
    dot.series = vec![Series::dot("dot", (7.5, 2.5), DATA, 4)];
    let (image, f) = render(&dot);
    let (c, r) = f.pixel((7.5, 2.5));
    assert_eq!(image.rgb(c, r), [DATA.0, DATA.1, DATA.2], "at ({c}, {r})");
    let (c0, r0) = f.pixel((0.0, 0.0));
    assert_eq!((c0, r0), (f.columns.start, f.rows.end - 1));
}

/// A flight from the ground, sampled at `n` points over `x` in 0..10 with
/// its landing at x = 6, carried on below the ground to x = 10.
fn flight(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let x = 10.0 * i as f64 / (n - 1) as f64;
            (x, x * (6.0 - x) * 0.5)
        })
        .collect()
}

#[test]
fn clip_below_stops_at_the_interpolated_crossing() {
    let path = flight(41); // x steps of 0.25, a sample at 6.0 exactly
    let clipped = plot::clip_below(&path, 0.0);
    assert!(clipped.iter().all(|&(_, y)| y >= 0.0), "{clipped:?}");
    assert_eq!(
        clipped.last(),
        Some(&(6.0, 0.0)),
        "ends on the landing sample"
    );
    assert_eq!(
        clipped.len(),
        25,
        "no point after the landing, none doubled"
    );

    // Samples straddle the crossing: the end is the chord's zero.
    let path = flight(30);
    let clipped = plot::clip_below(&path, 0.0);
    let (a, b) = (clipped[clipped.len() - 2], path[clipped.len() - 1]);
    assert!(a.1 > 0.0 && b.1 < 0.0, "{a:?} {b:?}");
    let end = *clipped.last().unwrap();
    let chord = a.0 + (b.0 - a.0) * a.1 / (a.1 - b.1);
    assert_eq!(end.1, 0.0);
    assert!((end.0 - chord).abs() < 1e-12, "{end:?} vs {chord}");
    assert!((end.0 - 6.0).abs() < 0.2, "{end:?}");

    // A floor above zero, a path that never crosses, one that starts below.
    let lifted: Vec<_> = path.iter().map(|&(x, y)| (x, y + 3.0)).collect();
    let high = plot::clip_below(&lifted, 2.0);
    assert!(high.len() > clipped.len(), "it lands later, at y = -1");
    assert!(high.iter().all(|&(_, y)| y >= 2.0), "{high:?}");
    assert_eq!(high.last().unwrap().1, 2.0);
    assert_eq!(plot::clip_below(&path[..10], 0.0), path[..10].to_vec());
    assert!(plot::clip_below(&[(0.0, -1.0), (1.0, 2.0)], 0.0).is_empty());
}

#[test]
fn a_clipped_path_draws_nothing_below_the_ground() {
    let draw = |points: Vec<(f64, f64)>| {
        let mut c = chart();
        c.y = -5.0..10.0;
        c.legend = SeriesLabelPosition::UpperLeft;
        c.series = vec![Series::line("flight", points, DATA, 2)];
        render(&c)
    };
    let below = |(image, f): &(Image, Frame)| {
        let (_, ground) = f.pixel((0.0, 0.0));
        // Rows more than the line's width under the ground's row.
        image.count(f.columns.clone(), ground + 3..f.rows.end, |c, r| {
            image.rgb(c, r) == [DATA.0, DATA.1, DATA.2]
        })
    };
    let unclipped = draw(flight(60));
    assert!(below(&unclipped) > 50, "the unclipped flight goes below");
    let clipped = draw(plot::clip_below(&flight(60), 0.0));
    assert_eq!(below(&clipped), 0, "the clipped flight stays above");
}

#[test]
fn fonts_register_once_and_again() {
    plot::fonts().expect("DejaVu Sans registers");
    plot::fonts().expect("a second call returns the first result");
}
