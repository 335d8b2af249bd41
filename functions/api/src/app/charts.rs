//! The overview's charts, drawn on the server as inline SVG: bars are `<rect>`s with
//! geometry attributes and a class the stylesheet colours (the page's CSP allows no inline
//! style and no script), each chart with a title and its numbers as a table for screen
//! readers. The data are the daily metrics store's days (one ranged read), summed by week.

use openloop_core::owner::metrics::{DailyMetrics, DayMetrics};

/// Weeks a chart shows.
pub const WEEKS: usize = 12;
/// Days read for the charts: the [`WEEKS`] weeks up to today.
pub const DAYS: i64 = (WEEKS * 7) as i64;

const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 180.0;
/// Room under the bars for the week labels.
const LABELS: f64 = 20.0;

/// One thing a chart counts: its name and the stylesheet class of its bars.
pub struct Series {
    pub label: &'static str,
    pub class: &'static str,
}

pub struct Bar {
    pub x: String,
    pub y: String,
    pub width: String,
    pub height: String,
    pub class: &'static str,
    /// What a pointer hovering the bar is told (`<title>`).
    pub title: String,
}

pub struct Label {
    pub x: String,
    pub text: String,
}

pub struct Chart {
    pub id: &'static str,
    pub title: &'static str,
    pub series: Vec<Series>,
    pub bars: Vec<Bar>,
    pub labels: Vec<Label>,
    /// The table behind it: one row a week, one value per series.
    pub rows: Vec<(String, Vec<u32>)>,
    pub max: u32,
    pub empty: bool,
}

impl Chart {
    pub fn view_box(&self) -> String {
        format!("0 0 {WIDTH} {HEIGHT}")
    }

    pub fn baseline(&self) -> String {
        format!("{:.1}", HEIGHT - LABELS)
    }
}

/// The days summed by week, newest week last: `(first day's label, counts)`. Days before
/// the first whole week are left out.
pub fn weeks(days: &[DayMetrics]) -> Vec<(String, DailyMetrics)> {
    let whole = days.len() / 7 * 7;
    days[days.len() - whole..]
        .chunks(7)
        .map(|week| {
            let mut sum = DailyMetrics::default();
            for day in week {
                sum.add(&day.counts);
            }
            (week[0].date.strftime("%b %-d").to_string(), sum)
        })
        .collect()
}

/// A bar chart of one value per series a week: `stacked` piles them up, else they stand side
/// by side.
pub fn chart(
    id: &'static str,
    title: &'static str,
    series: Vec<Series>,
    weeks: &[(String, DailyMetrics)],
    values: impl Fn(&DailyMetrics) -> Vec<u32>,
    stacked: bool,
) -> Chart {
    let rows: Vec<(String, Vec<u32>)> = weeks.iter().map(|(label, m)| (label.clone(), values(m))).collect();
    let max = rows
        .iter()
        .map(|(_, v)| {
            if stacked {
                v.iter().sum()
            } else {
                v.iter().copied().max().unwrap_or(0)
            }
        })
        .max()
        .unwrap_or(0);
    let plot = HEIGHT - LABELS - 4.0;
    let scale = if max == 0 { 0.0 } else { plot / f64::from(max) };
    let slot = WIDTH / rows.len().max(1) as f64;
    let gap = slot * 0.2;
    let mut bars = Vec::new();
    let mut labels = Vec::new();
    for (i, (label, vals)) in rows.iter().enumerate() {
        let left = i as f64 * slot + gap / 2.0;
        let inner = slot - gap;
        let mut stack = 0.0;
        for (k, (value, s)) in vals.iter().zip(&series).enumerate() {
            let h = f64::from(*value) * scale;
            let (x, w, y) = if stacked {
                stack += h;
                (left, inner, HEIGHT - LABELS - stack)
            } else {
                let w = inner / vals.len() as f64;
                (left + w * k as f64, w, HEIGHT - LABELS - h)
            };
            if *value > 0 {
                bars.push(Bar {
                    x: format!("{x:.1}"),
                    y: format!("{y:.1}"),
                    width: format!("{w:.1}"),
                    height: format!("{h:.1}"),
                    class: s.class,
                    title: format!("week of {label}: {value} {}", s.label),
                });
            }
        }
        if i % 2 == 1 || rows.len() <= 6 {
            labels.push(Label {
                x: format!("{:.1}", left + inner / 2.0),
                text: label.clone(),
            });
        }
    }
    Chart {
        id,
        title,
        series,
        bars,
        labels,
        empty: max == 0,
        rows,
        max,
    }
}

/// The overview's two weekly charts: outcomes (completed, cancelled, escalated) and messages
/// sent against members' replies.
pub fn overview_charts(days: &[DayMetrics]) -> Vec<Chart> {
    let weeks = weeks(days);
    vec![
        chart(
            "outcomes",
            "Outcomes per week",
            vec![
                Series {
                    label: "completed",
                    class: "s-good",
                },
                Series {
                    label: "cancelled",
                    class: "s-muted",
                },
                Series {
                    label: "escalated",
                    class: "s-bad",
                },
            ],
            &weeks,
            |m| vec![m.tasks_completed, m.tasks_cancelled, m.tasks_escalated],
            true,
        ),
        chart(
            "messages",
            "Messages sent and replies per week",
            vec![
                Series {
                    label: "messages sent",
                    class: "s-brand",
                },
                Series {
                    label: "replies",
                    class: "s-good",
                },
            ],
            &weeks,
            |m| vec![m.messages_sent, m.member_replies],
            false,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use openloop_core::owner::metrics::Rates;

    fn day(n: i8, sent: u32, replies: u32) -> DayMetrics {
        let counts = DailyMetrics {
            messages_sent: sent,
            member_replies: replies,
            ..DailyMetrics::default()
        };
        DayMetrics {
            date: jiff::civil::date(2026, 3, 1 + n),
            rates: Rates::of(&counts, &openloop_core::owner::metrics::AiPricing::default()),
            counts,
        }
    }

    #[test]
    fn days_are_summed_by_whole_weeks_newest_last() {
        let days: Vec<_> = (0..16).map(|n| day(n, 1, u32::from(n == 15))).collect();
        let weeks = weeks(&days);
        assert_eq!(weeks.len(), 2, "the two days before the first whole week are left out");
        assert_eq!(weeks[0].0, "Mar 3");
        assert_eq!((weeks[1].1.messages_sent, weeks[1].1.member_replies), (7, 1));
    }

    #[test]
    fn bars_scale_to_the_tallest_and_zeros_draw_nothing() {
        let days: Vec<_> = (0..14).map(|n| day(n, if n < 7 { 2 } else { 1 }, 0)).collect();
        let charts = overview_charts(&days);
        let messages = &charts[1];
        assert_eq!(messages.max, 14);
        assert_eq!(messages.bars.len(), 2, "no bar for zero replies");
        assert_eq!(messages.bars[0].height, format!("{:.1}", HEIGHT - LABELS - 4.0));
        assert!(charts[0].empty, "no outcomes yet");
    }
}
