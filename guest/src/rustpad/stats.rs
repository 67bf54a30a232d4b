//! Rustpad's `/api/stats`: when the instance started, and how many pads it
//! holds in memory and in its database. The start time also tells one
//! Rustpad instance from the next, which the guard binds approvals to.

use serde_json::{Map, Value};

use super::Error;
use super::http;
use super::url::RustpadUrl;

/// The largest whole number a JSON client reads exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// The furthest instant JavaScript's `Date` holds, in seconds.
const MAX_TIMESTAMP_SECONDS: i64 = 8_640_000_000_000;

/// What `/api/stats` says, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// When the instance started, Unix seconds.
    pub start_time: i64,
    pub num_documents: u64,
    pub database_size: u64,
}

/// Reads and checks `/api/stats`.
pub fn read(url: &RustpadUrl) -> Result<Stats, Error> {
    let response = http::get(url, "/api/stats")?;
    parse(&response.body)
}

/// When the instance started, as a number an approval can carry.
pub fn start_time(url: &RustpadUrl) -> Result<u64, Error> {
    let stats = read(url)?;
    u64::try_from(stats.start_time).map_err(|_| {
        Error::new("Rustpad's /api/stats answer has an unexpected shape: start_time is before 1970")
    })
}

fn parse(body: &[u8]) -> Result<Stats, Error> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| Error::new("Rustpad's /api/stats answer is not valid JSON"))?;
    let empty = Map::new();
    let fields = value.as_object().unwrap_or(&empty);
    let start_time = fields
        .get("start_time")
        .and_then(Value::as_i64)
        .filter(|t| t.abs() <= MAX_TIMESTAMP_SECONDS)
        .ok_or_else(|| {
            Error::new("Rustpad's /api/stats answer has an unexpected shape: start_time is not a Unix timestamp")
        })?;
    let count = |name: &str| {
        fields
            .get(name)
            .and_then(Value::as_u64)
            .filter(|n| *n <= MAX_SAFE_INTEGER)
            .ok_or_else(|| {
                Error::new(format!(
                    "Rustpad's /api/stats answer has an unexpected shape: {name} is not a whole number of documents"
                ))
            })
    };
    Ok(Stats {
        start_time,
        num_documents: count("num_documents")?,
        database_size: count("database_size")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_checked_field_by_field() {
        let stats = parse(br#"{"start_time":1795994559,"num_documents":2,"database_size":0}"#);
        assert_eq!(
            stats,
            Ok(Stats {
                start_time: 1_795_994_559,
                num_documents: 2,
                database_size: 0
            })
        );
        for bad in [
            &b"not json"[..],
            br#"{"start_time":"soon","num_documents":2,"database_size":0}"#,
            br#"{"start_time":1,"num_documents":-2,"database_size":0}"#,
            br#"{"start_time":1,"num_documents":2}"#,
        ] {
            assert!(parse(bad).is_err());
        }
    }
}
