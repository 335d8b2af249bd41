//! The overview's charts, drawn on the server as inline SVG: bars are `<rect>`s with
//! geometry attributes and a class the stylesheet colours (the page's CSP allows no inline
//! style and no script), each chart with a title and its numbers as a table for screen
//! readers. The weekly charts' data are the daily metrics store's days (one ranged read),
//! summed by week; the revenue chart's, the engine's overview (the closed tasks' tallies).

use openloop_core::owner::metrics::{DailyMetrics, DayMetrics};

/// Months the revenue chart shows.
pub const MONTHS: usize = 12;
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
    /// The table behind it: one row a period, one value per series, as shown.
    pub rows: Vec<(String, Vec<String>)>,
    /// The table's first column ("Week of", "Month").
    pub period: &'static str,
    /// The tallest period, as said under the chart ("Tallest week: 14.").
    pub tallest: String,
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
/// the first whole week are left out, and so is every week that ended before `since` (the day
/// the gym was made: no empty weeks from before it existed).
pub fn weeks(days: &[DayMetrics], since: jiff::civil::Date) -> Vec<(String, DailyMetrics)> {
    let whole = days.len() / 7 * 7;
    days[days.len() - whole..]
        .chunks(7)
        .filter(|week| week.last().is_some_and(|d| d.date >= since))
        .map(|week| {
            let mut sum = DailyMetrics::default();
            for day in week {
                sum.add(&day.counts);
            }
            (week[0].date.strftime("%b %-d").to_string(), sum)
        })
        .collect()
}

/// How a chart's periods and values are said.
struct Wording {
    /// The table's first column.
    period: &'static str,
    /// A bar's title: "week of Mar 3: 4 replies".
    bar: fn(&str, &str, &str) -> String,
    /// "Tallest week: 14."
    tallest: fn(&str) -> String,
    value: fn(f64) -> String,
}

const WEEKLY: Wording = Wording {
    period: "Week of",
    bar: |period, value, series| format!("week of {period}: {value} {series}"),
    tallest: |value| format!("Tallest week: {value}."),
    value: |v| format!("{v:.0}"),
};

const MONTHLY_MONEY: Wording = Wording {
    period: "Month",
    bar: |period, value, series| format!("{period}: {value} {series}"),
    tallest: |value| format!("Best month: {value}."),
    value: crate::page::money,
};

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
    let rows = weeks
        .iter()
        .map(|(label, m)| (label.clone(), values(m).into_iter().map(f64::from).collect()))
        .collect();
    draw(id, title, series, rows, WEEKS, stacked, &WEEKLY)
}

/// Bars of one value per series a period (`rows`, oldest first, from the left of `slots`
/// places), scaled to the tallest.
fn draw(
    id: &'static str,
    title: &'static str,
    series: Vec<Series>,
    rows: Vec<(String, Vec<f64>)>,
    slots: usize,
    stacked: bool,
    say: &Wording,
) -> Chart {
    let max = rows
        .iter()
        .map(|(_, v)| {
            if stacked {
                v.iter().map(|x| x.max(0.0)).sum()
            } else {
                v.iter().copied().fold(0.0, f64::max)
            }
        })
        .fold(0.0, f64::max);
    let plot = HEIGHT - LABELS - 4.0;
    let scale = if max <= 0.0 { 0.0 } else { plot / max };
    let slot = WIDTH / slots.max(rows.len()).max(1) as f64;
    let gap = slot * 0.2;
    let mut bars = Vec::new();
    let mut labels = Vec::new();
    for (i, (label, vals)) in rows.iter().enumerate() {
        let left = i as f64 * slot + gap / 2.0;
        let inner = slot - gap;
        let mut stack = 0.0;
        for (k, (value, s)) in vals.iter().zip(&series).enumerate() {
            let h = value.max(0.0) * scale;
            let (x, w, y) = if stacked {
                stack += h;
                (left, inner, HEIGHT - LABELS - stack)
            } else {
                let w = inner / vals.len() as f64;
                (left + w * k as f64, w, HEIGHT - LABELS - h)
            };
            if *value > 0.0 {
                bars.push(Bar {
                    x: format!("{x:.1}"),
                    y: format!("{y:.1}"),
                    width: format!("{w:.1}"),
                    height: format!("{h:.1}"),
                    class: s.class,
                    title: (say.bar)(label, &(say.value)(*value), s.label),
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
        empty: max <= 0.0,
        rows: rows
            .into_iter()
            .map(|(label, vals)| (label, vals.into_iter().map(say.value).collect()))
            .collect(),
        period: say.period,
        tallest: (say.tallest)(&(say.value)(max)),
    }
}

/// Revenue retained per month (`YYYY-MM` and the amount, oldest first, as the engine's
/// overview reads it from the closed tasks' tallies, from the month the gym was made in): one
/// bar a month, labelled "Nov 2026", each as wide as in a year's chart.
pub fn revenue_chart(months: &[(String, f64)]) -> Chart {
    let rows = months
        .iter()
        .map(|(month, amount)| {
            let label = format!("{month}-01")
                .parse::<jiff::civil::Date>()
                .map(|d| d.strftime("%b %Y").to_string())
                .unwrap_or_else(|_| month.clone());
            (label, vec![*amount])
        })
        .collect();
    draw(
        "revenue",
        "Revenue retained per month",
        vec![Series {
            label: "revenue retained",
            class: "s-good",
        }],
        rows,
        MONTHS,
        false,
        &MONTHLY_MONEY,
    )
}

/// The overview's two weekly charts: outcomes (completed, cancelled, escalated) and messages
/// sent against members' replies.
pub fn overview_charts(days: &[DayMetrics], since: jiff::civil::Date) -> Vec<Chart> {
    let weeks = weeks(days, since);
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
        let weeks = weeks(&days, jiff::civil::Date::MIN);
        assert_eq!(weeks.len(), 2, "the two days before the first whole week are left out");
        let since_made = super::weeks(&days, jiff::civil::date(2026, 3, 12));
        assert_eq!(since_made.len(), 1, "no week that ended before the gym was made");
        assert_eq!(since_made[0].0, "Mar 10");
        assert_eq!(weeks[0].0, "Mar 3");
        assert_eq!((weeks[1].1.messages_sent, weeks[1].1.member_replies), (7, 1));
    }

    #[test]
    fn bars_scale_to_the_tallest_and_zeros_draw_nothing() {
        let days: Vec<_> = (0..14).map(|n| day(n, if n < 7 { 2 } else { 1 }, 0)).collect();
        let charts = overview_charts(&days, jiff::civil::Date::MIN);
        let messages = &charts[1];
        assert_eq!(messages.tallest, "Tallest week: 14.");
        assert_eq!(messages.bars.len(), 2, "no bar for zero replies");
        assert_eq!(messages.bars[0].height, format!("{:.1}", HEIGHT - LABELS - 4.0));
        assert!(charts[0].empty, "no outcomes yet");
    }

    #[test]
    fn revenue_is_one_bar_a_month_said_in_money() {
        let chart = revenue_chart(&[("2026-10".into(), 0.0), ("2026-11".into(), 1234.5), ("2026-12".into(), 600.0)]);
        assert_eq!(chart.bars.len(), 2, "no bar for a month without revenue");
        assert_eq!(chart.bars[0].title, "Nov 2026: $1,235 revenue retained");
        assert_eq!(chart.bars[0].height, format!("{:.1}", HEIGHT - LABELS - 4.0));
        assert_eq!(chart.rows[2], ("Dec 2026".to_owned(), vec!["$600".to_owned()]));
        assert_eq!(chart.tallest, "Best month: $1,235.");
        assert!(revenue_chart(&[("2026-11".into(), 0.0)]).empty);
    }
}
