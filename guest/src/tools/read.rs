//! The read tools: get_document and get_stats over HTTP, get_document_info
//! over the collaboration socket (without appearing in the pad). A
//! get_document with a line window is read in `window`.

use serde_json::{Map, Value, json};

use super::args::Args;
use super::catalogue::EPHEMERAL;
use super::window::{LineWindow, get_window};
use crate::config::RustpadUrl;
use crate::result::{self, ToolError, ToolResult};
use crate::rustpad::http;
use crate::rustpad::socket::{PadSocket, Track};
use crate::text::{self, MAX_RESULT_CHARS};

/// Room left in the result for everything but the pad text.
const RESULT_OVERHEAD: usize = 1_000;

pub fn get_document(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    if let Some(window) = LineWindow::of(args)? {
        return get_window(url, id, &window);
    }
    let response = http::get(url, &format!("/api/text/{id}"))?;
    let raw = String::from_utf8_lossy(&response.body);
    let cleaned = text::clean_text(&raw);
    let mut payload = Map::new();
    payload.insert("id".into(), json!(id));
    if raw.is_empty() {
        payload.insert("text".into(), json!(""));
        payload.insert("empty".into(), json!(true));
        payload.insert(
            "note".into(),
            json!(format!(
                "Pad \"{id}\" is empty, or it never existed, or it has expired: Rustpad answers all three the same way."
            )),
        );
        return result::untrusted(payload);
    }
    let (shown, truncated) = text::fit_json_budget(&cleaned, MAX_RESULT_CHARS - RESULT_OVERHEAD);
    payload.insert("text".into(), json!(shown));
    let mut notes = Vec::new();
    if let Some((shown, total)) = truncated {
        payload.insert(
            "truncated".into(),
            json!({ "shown": shown, "total": total }),
        );
        notes.push(format!(
            "Only the first {shown} of {total} characters fit in one result."
        ));
    }
    let removed = text::char_len(&raw) - text::char_len(&cleaned);
    if removed > 0 {
        notes.push(format!(
            "{removed} control character(s) were removed from the text shown; a search string copied from it may not match the pad exactly."
        ));
    }
    if !notes.is_empty() {
        payload.insert("note".into(), json!(notes.join(" ")));
    }
    result::untrusted(payload)
}

pub fn get_document_info(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let socket = PadSocket::look(url, id, Track::LENGTH)?;
    let mut payload = Map::new();
    payload.insert("id".into(), json!(id));
    payload.insert("url".into(), json!(url.share_link(id)));
    payload.insert("length_characters".into(), json!(socket.document().len()));
    payload.insert("revision".into(), json!(socket.revision()));
    payload.insert(
        "language".into(),
        json!(socket.language().unwrap_or("plaintext (default)")),
    );
    payload.insert("active_users".into(), json!(socket.other_users()));
    payload.insert("note".into(), json!(EPHEMERAL));
    socket.close();
    result::untrusted(payload)
}

/// Integers JavaScript clients can hold exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// The largest start time a date can show (the ECMAScript date range, in seconds).
const MAX_TIMESTAMP_SECONDS: i64 = 8_640_000_000_000;

pub fn get_stats(url: &RustpadUrl) -> ToolResult {
    let response = http::get(url, "/api/stats")?;
    let value: Value = serde_json::from_slice(&response.body)
        .map_err(|_| ToolError::new("Rustpad's /api/stats answer is not valid JSON"))?;
    let empty = Map::new();
    let fields = value.as_object().unwrap_or(&empty);
    let start_time = fields
        .get("start_time")
        .and_then(Value::as_i64)
        .filter(|t| t.abs() <= MAX_TIMESTAMP_SECONDS)
        .ok_or_else(|| {
            ToolError::new("Rustpad's /api/stats answer has an unexpected shape: start_time is not a Unix timestamp")
        })?;
    let count = |name: &str| {
        fields
            .get(name)
            .and_then(Value::as_u64)
            .filter(|n| *n <= MAX_SAFE_INTEGER)
            .ok_or_else(|| {
                ToolError::new(format!(
                    "Rustpad's /api/stats answer has an unexpected shape: {name} is not a whole number of documents"
                ))
            })
    };
    result::data(json!({
        "start_time": start_time,
        "start_time_iso": iso8601(start_time),
        "num_documents": count("num_documents")?,
        "database_size": count("database_size")?,
    }))
}

/// Unix seconds as an ISO 8601 UTC timestamp, with JavaScript's expanded
/// years (±YYYYYY) outside 0000–9999.
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
