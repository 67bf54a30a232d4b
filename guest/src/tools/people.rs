//! Where people are working in a pad, as the reads report it: each person's
//! carets and selections as lines and columns (1-based, in code points) of
//! the text the result is about, bounded, with names cleaned like all pad
//! content. And which of a batch's edits changed a line someone is on.

use ropey::Rope;
use serde_json::{Value, json};

use super::schema::{self, described};
use crate::rustpad::positions::{MAX_PER_KIND, Positions};
use crate::rustpad::state::PadState;

/// People shown; the rest are counted.
pub const MAX_PEOPLE_SHOWN: usize = 20;
/// Carets and selections shown in all (a person's are shown whole or not).
pub const MAX_PLACES_SHOWN: usize = 40;

/// One person's places in a text, kept to the ones inside it.
pub struct Person {
    pub name: String,
    /// The connection is a write of rustpad-mcp's, as the pad's history
    /// shows: its first entries are a writer's mark. Names prove nothing
    /// (anyone may call themselves `rustpad-mcp`); a mark is harder to
    /// come by, though anyone who sends raw edits can copy it.
    pub this_server: bool,
    /// Lines and columns of carets.
    cursors: Vec<Place>,
    /// Start and end of selections.
    selections: Vec<(Place, Place)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Place {
    line: usize,
    column: usize,
}

impl Place {
    fn of(text: &Rope, offset: u64) -> Place {
        let offset = offset as usize;
        let line = text.char_to_line(offset);
        Place {
            line: line + 1,
            column: offset - text.line_to_char(line) + 1,
        }
    }

    fn to_json(self) -> Value {
        json!({ "line": self.line, "column": self.column })
    }
}

impl Person {
    /// Whether a caret of this person's is on, or a selection of theirs
    /// covers part of, lines `first..=last`.
    pub fn is_on(&self, first: usize, last: usize) -> bool {
        self.cursors
            .iter()
            .any(|place| (first..=last).contains(&place.line))
            || self
                .selections
                .iter()
                .any(|(start, end)| start.line <= last && end.line >= first)
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "this_server": self.this_server,
            "cursors": self.cursors.iter().map(|p| p.to_json()).collect::<Vec<_>>(),
            "selections": self
                .selections
                .iter()
                .map(|(start, end)| json!({ "start": start.to_json(), "end": end.to_json() }))
                .collect::<Vec<_>>(),
        })
    }

    fn sentence(&self) -> String {
        let mut places: Vec<String> = self
            .cursors
            .iter()
            .map(|p| format!("caret at line {}, column {}", p.line, p.column))
            .collect();
        places.extend(self.selections.iter().map(|(start, end)| {
            format!(
                "selection from line {}, column {} to line {}, column {}",
                start.line, start.column, end.line, end.column
            )
        }));
        let who = if self.this_server {
            format!("{} (a write of this server's)", self.name)
        } else {
            self.name.clone()
        };
        format!("{who}: {}", places.join("; "))
    }
}

/// Everyone named in `state` with a caret or selection in `text` (the text
/// at the state's revision), in connection order.
pub fn in_text(state: &PadState, text: &Rope) -> Vec<Person> {
    let placed = state.people_positions();
    located(placed.iter().map(|p| (p.name, p.positions, p.writer)), text)
}

/// The same for positions carried over an edit not yet in `state`'s text:
/// each one's name, places and whether they are a write of rustpad-mcp's.
pub fn located<'a>(
    positions: impl IntoIterator<Item = (&'a str, &'a Positions, bool)>,
    text: &Rope,
) -> Vec<Person> {
    let length = text.len_chars() as u64;
    positions
        .into_iter()
        .map(|(name, positions, this_server)| {
            let inside = positions.within(length);
            Person {
                name: name.to_string(),
                this_server,
                cursors: inside
                    .cursors
                    .iter()
                    .map(|&at| Place::of(text, at))
                    .collect(),
                selections: inside
                    .selections
                    .iter()
                    .map(|&(start, end)| (Place::of(text, start), Place::of(text, end)))
                    .collect(),
            }
        })
        .filter(|person| !person.cursors.is_empty() || !person.selections.is_empty())
        .collect()
}

/// The people a result shows, within both limits.
fn shown(people: &[Person]) -> &[Person] {
    let mut places = 0;
    let count = people
        .iter()
        .take(MAX_PEOPLE_SHOWN)
        .take_while(|person| {
            places += person.cursors.len() + person.selections.len();
            places <= MAX_PLACES_SHOWN
        })
        .count();
    &people[..count]
}

/// The `people` field of a result.
pub fn to_json(people: &[Person]) -> Value {
    json!(
        shown(people)
            .iter()
            .map(Person::to_json)
            .collect::<Vec<_>>()
    )
}

/// The lines a result's text block adds about them, if any.
pub fn listing(people: &[Person]) -> Option<String> {
    if people.is_empty() {
        return None;
    }
    let shown = shown(people);
    let mut lines: Vec<String> = shown.iter().map(Person::sentence).collect();
    if people.len() > shown.len() {
        lines.push(format!(
            "and {} more not listed",
            people.len() - shown.len()
        ));
    }
    Some(format!("Where people are working:\n{}", lines.join("\n")))
}

/// Characters the `people` field and its listing take in a result.
pub fn cost(people: &[Person]) -> usize {
    if people.is_empty() {
        return 0;
    }
    to_json(people).to_string().chars().count() + listing(people).map_or(0, |l| l.chars().count())
}

/// The schema of the `people` field.
pub fn schema() -> Value {
    let place = json!({
        "type": "object",
        "properties": { "line": schema::line_number(), "column": schema::line_number() },
        "required": ["line", "column"],
        "additionalProperties": false,
    });
    json!({
        "type": "array",
        "maxItems": MAX_PEOPLE_SHOWN,
        "description": format!("Where the others who have the pad open have their carets and selections: lines and columns from 1, in characters (code points), in the text this result is about. At most {MAX_PER_KIND} carets and {MAX_PER_KIND} selections per person, {MAX_PEOPLE_SHOWN} people and {MAX_PLACES_SHOWN} positions in all; positions past the end of the pad are left out"),
        "items": {
            "type": "object",
            "properties": {
                "name": described(schema::string(), "The name they gave, with control characters removed"),
                "this_server": described(schema::boolean(), "True for a write of rustpad-mcp's under way, as the pad's history shows it (its connection's first entry is a writer's mark), whatever its name; a person who calls themselves rustpad-mcp is false"),
                "cursors": { "type": "array", "items": place },
                "selections": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": { "start": place, "end": place },
                        "required": ["start", "end"],
                        "additionalProperties": false,
                    },
                },
            },
            "required": ["name", "this_server", "cursors", "selections"],
            "additionalProperties": false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(json: &str) -> Positions {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn offsets_become_lines_and_columns_in_code_points() {
        let text = Rope::from_str("ab\n🎉cd\n");
        let seen = positions(r#"{"cursors":[0,5,7,99],"selections":[[6,1]]}"#);
        let people = located([("Ana", &seen, false)], &text);
        assert_eq!(people.len(), 1);
        let ana = &people[0];
        let places: Vec<(usize, usize)> = ana.cursors.iter().map(|p| (p.line, p.column)).collect();
        // The end of the pad counts; past it does not.
        assert_eq!(places, [(1, 1), (2, 3), (3, 1)]);
        assert_eq!(ana.selections[0].0, Place { line: 1, column: 2 });
        assert_eq!(ana.selections[0].1, Place { line: 2, column: 4 });
        assert!(ana.is_on(2, 2) && ana.is_on(3, 9) && !ana.is_on(4, 4));
        assert!(
            listing(&people)
                .unwrap()
                .contains("Ana: caret at line 1, column 1;")
        );
        let nobody = located([("Bo", &positions(r#"{"cursors":[50]}"#), false)], &text);
        assert!(nobody.is_empty() && listing(&nobody).is_none());
    }
}
