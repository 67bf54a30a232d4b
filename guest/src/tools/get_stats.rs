//! `get_stats`: the Rustpad server's statistics, from its HTTP API.

use schemars::JsonSchema;
use serde::Serialize;

use super::args::NoArguments;
use super::outcome::{self, ToolResult};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::rustpad::stats;

pub static TOOL: Tool = Tool {
    name: "get_stats",
    title: "Rustpad server statistics",
    summary: "Server start time and document counts",
    description: Description::Fixed("Returns the Rustpad server's statistics: when it started, how many pads it holds in memory, and how many it has persisted to its database (0 without one)."),
    kind: Kind::Read,
    essential: false,
    schemas: Schemas::of::<NoArguments, Stats>(),
    run,
};

/// The statistics, in integers JavaScript clients can hold exactly.
#[derive(Serialize, JsonSchema)]
struct Stats {
    /// Server start, Unix seconds
    start_time: i64,
    start_time_iso: String,
    num_documents: u64,
    database_size: u64,
}

fn run(call: &Call) -> ToolResult {
    let stats = stats::read(call.url)?;
    outcome::data(&Stats {
        start_time: stats.start_time,
        start_time_iso: iso8601(stats.start_time),
        num_documents: stats.num_documents,
        database_size: stats.database_size,
    })
}

fn iso8601(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{}{:06}", if year < 0 { '-' } else { '+' }, year.abs())
    };
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}.000Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn formats_timestamps_like_javascript() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_795_994_559), "2026-11-29T23:22:39.000Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59.000Z");
        assert_eq!(iso8601(8_640_000_000_000), "+275760-09-13T00:00:00.000Z");
    }
}
