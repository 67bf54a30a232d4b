//! A pad's whole text as every read shows it: fetched over HTTP, control
//! characters removed, and cut to fit one result. `get_document` and the
//! pad resources read here, and each says in its own words what was done.

use crate::rustpad::{Error, http, url::RustpadUrl};
use crate::text;

/// What a read of a whole pad shows.
pub struct WholeText {
    /// The text, cleaned and cut to the budget.
    pub shown: String,
    /// `(shown, total)` characters, when it was cut.
    pub cut: Option<(usize, usize)>,
    /// How many control characters were removed.
    pub removed: usize,
    /// Rustpad sent nothing: the pad is empty, or never existed, or expired.
    pub empty: bool,
}

/// Pad `id`'s whole text, within `budget` characters of JSON.
pub fn whole_text(url: &RustpadUrl, id: &str, budget: usize) -> Result<WholeText, Error> {
    let raw = http::pad_text(url, id)?;
    let cleaned = text::clean_text(&raw);
    let (shown, cut) = text::fit_json_budget(&cleaned, budget);
    Ok(WholeText {
        shown: shown.to_string(),
        cut,
        removed: text::char_len(&raw) - text::char_len(&cleaned),
        empty: raw.is_empty(),
    })
}
