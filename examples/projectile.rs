//! Differentiable physics: a projectile with quadratic air drag, integrated
//! over 1 000 semi-implicit Euler steps inside a `#[differentiable]` loop.
//! Gradient descent on the launch speed and angle makes it pass through a
//! target; prints the miss distance per iteration and writes
//! `projectile.png`: height over distance in metres, the ground, the first
//! guess (grey, stopped where it lands), the optimised path (blue) and the
//! target (red), each named in the legend.
//!
//! Run: `cargo run --release --example projectile`

use nabla::prelude::*;
use plotters::prelude::*;

mod plot;

const G: f64 = 9.81;
const DRAG: f64 = 0.02; // quadratic drag coefficient per unit mass (1/m)
const STEPS: usize = 1000;
const T: f64 = 2.5; // flight time (s)
const DT: f64 = T / STEPS as f64;
const TARGET: (f64, f64) = (40.0, 5.0);

/// Squared distance between the projectile at time T and the target.
#[differentiable]
fn miss(speed: f64, angle: f64) -> f64 {
    let mut x = speed * 0.0;
    let mut y = speed * 0.0;
    let mut vx = speed * angle.cos();
    let mut vy = speed * angle.sin();
    for _ in 0..STEPS {
        let v = (vx * vx + vy * vy).sqrt();
        vx -= DT * DRAG * v * vx;
        vy -= DT * (G + DRAG * v * vy);
        x += DT * vx;
        y += DT * vy;
    }
    (x - TARGET.0) * (x - TARGET.0) + (y - TARGET.1) * (y - TARGET.1)
}

/// The same flight, recording positions for the plot.
fn trajectory(speed: f64, angle: f64) -> Vec<(f64, f64)> {
    let (mut x, mut y, mut vx, mut vy) = (0.0, 0.0, speed * angle.cos(), speed * angle.sin());
    let mut points = vec![(x, y)];
    for _ in 0..STEPS {
        let v = (vx * vx + vy * vy).sqrt();
        vx -= DT * DRAG * v * vx;
        vy -= DT * (G + DRAG * v * vy);
        x += DT * vx;
        y += DT * vy;
        points.push((x, y));
    }
    points
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut speed, mut angle) = (15.0f64, 0.3f64);
    let first = (speed, angle);
    let lr = 0.02;
    for it in 0..=600 {
        let (d2, (gs, ga)) = nabla::value_and_grad!(miss, argnums = (0, 1))(speed, angle);
        if it % 50 == 0 {
            println!(
                "iter {it:3}  miss {:8.4} m   speed {speed:7.3} m/s  angle {:6.2}°",
                d2.sqrt(),
                angle.to_degrees()
            );
        }
        // Normalised gradient steps: robust to the scale of the miss.
        let norm = (gs * gs + ga * ga).sqrt().max(1e-12);
        let step = lr * d2.sqrt().min(10.0);
        speed -= step * gs / norm * 10.0;
        angle -= step * ga / norm * 0.5;
    }
    let final_miss = miss(speed, angle).sqrt();
    println!(
        "final miss {final_miss:.2e} m with speed {speed:.4} m/s at {:.3}°",
        angle.to_degrees()
    );
    assert!(final_miss < 1e-3, "the optimiser did not reach the target");

    let guess = plot::clip_below(&trajectory(first.0, first.1), 0.0);
    let (gx, _) = guess.last().copied().unwrap_or_default();
    let chart = plot::Chart {
        title: "Projectile with drag aimed by gradient descent".into(),
        x_label: "distance x (m)".into(),
        y_label: "height y (m)".into(),
        x: -1.0..45.0,
        y: -1.0..20.0,
        legend: SeriesLabelPosition::UpperLeft,
        series: vec![
            plot::Series::line("ground (y = 0)", [(-1.0, 0.0), (45.0, 0.0)], BLACK, 1),
            plot::Series::line(
                format!(
                    "first guess: {:.0} m/s at {:.1}°, lands at x = {gx:.1} m",
                    first.0,
                    first.1.to_degrees()
                ),
                guess,
                BLACK.mix(0.45),
                2,
            ),
            plot::Series::line(
                format!(
                    "optimised: {speed:.2} m/s at {:.1}°, at the target after {T} s",
                    angle.to_degrees()
                ),
                trajectory(speed, angle),
                BLUE,
                3,
            ),
            plot::Series::dot(
                format!("target ({} m, {} m)", TARGET.0, TARGET.1),
                TARGET,
                RED,
                6,
            ),
        ],
    };
    chart.save_png("projectile.png", (900, 560))?;
    println!("wrote projectile.png");
    Ok(())
}
