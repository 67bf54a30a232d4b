//! Where people are working in a pad, as the reads report it: each person's
//! carets and selections as lines and columns (1-based, in code points) of
//! the text the result is about, bounded, with names cleaned like all pad
//! content. And which of a batch's edits changed a line someone is on.

use std::borrow::Cow;
use std::ops::Deref;

use ropey::Rope;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};

use crate::rustpad::positions::Positions;
use crate::rustpad::state::PadState;

/// People shown; the rest are counted.
pub const MAX_PEOPLE_SHOWN: usize = 20;
/// Carets and selections shown in all (a person's are shown whole or not).
pub const MAX_PLACES_SHOWN: usize = 40;

/// One person's places in a text, kept to the ones inside it.
#[derive(Serialize, JsonSchema)]
pub struct Person {
    /// The name they gave, with control characters removed
    pub name: String,
    // Whether the connection is a write of rustpad-mcp's, as the pad's
    // history shows: its latest entries are a writer's mark. Names prove
    // nothing (anyone may call themselves `rustpad-mcp`); a mark is harder
    // to come by, though anyone who sends raw edits can copy it.
    /// True for a write of rustpad-mcp's under way, as the pad's history shows it (its connection's latest entries are a writer's mark), whatever its name; a person who calls themselves rustpad-mcp is false
    pub this_server: bool,
    // Lines and columns of carets.
    cursors: Vec<Place>,
    // Start and end of selections.
    selections: Vec<Selection>,
}

/// A line and a column, both from 1.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, JsonSchema)]
struct Place {
    #[schemars(range(min = 1))]
    line: usize,
    #[schemars(range(min = 1))]
    column: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, JsonSchema)]
struct Selection {
    start: Place,
    end: Place,
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
                .any(|Selection { start, end }| start.line <= last && end.line >= first)
    }

    fn sentence(&self) -> String {
        let mut places: Vec<String> = self
            .cursors
            .iter()
            .map(|p| format!("caret at line {}, column {}", p.line, p.column))
            .collect();
        places.extend(self.selections.iter().map(|Selection { start, end }| {
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

/// Where the others who have the pad open have their carets and
/// selections: lines and columns from 1, in characters (code points), in
/// the text a result is about. At most
/// [`MAX_PER_KIND`](crate::rustpad::positions::MAX_PER_KIND) carets and as
/// many selections per person; a result shows at most [`MAX_PEOPLE_SHOWN`]
/// people and [`MAX_PLACES_SHOWN`] positions in all, and counts the rest;
/// positions past the end of the pad are left out. Each result's field
/// says what the text is.
#[derive(Default)]
pub struct People(Vec<Person>);

impl Deref for People {
    type Target = [Person];

    fn deref(&self) -> &[Person] {
        &self.0
    }
}

/// Everyone named in `state` with a caret or selection in `text` (the text
/// at the state's revision), in connection order.
pub fn in_text(state: &PadState, text: &Rope) -> People {
    let placed = state.people_positions();
    located(placed.iter().map(|p| (p.name, p.positions, p.writer)), text)
}

/// The same for positions carried over an edit not yet in `state`'s text:
/// each one's name, places and whether they are a write of rustpad-mcp's.
pub fn located<'a>(
    positions: impl IntoIterator<Item = (&'a str, &'a Positions, bool)>,
    text: &Rope,
) -> People {
    let length = text.len_chars() as u64;
    let people = positions
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
                    .map(|&(start, end)| Selection {
                        start: Place::of(text, start),
                        end: Place::of(text, end),
                    })
                    .collect(),
            }
        })
        .filter(|person| !person.cursors.is_empty() || !person.selections.is_empty())
        .collect();
    People(people)
}

impl People {
    /// Nobody has a caret or selection in the text: a result leaves its
    /// `people` out.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The people a result shows, within both limits.
    fn shown(&self) -> &[Person] {
        let mut places = 0;
        let count = self
            .iter()
            .take(MAX_PEOPLE_SHOWN)
            .take_while(|person| {
                places += person.cursors.len() + person.selections.len();
                places <= MAX_PLACES_SHOWN
            })
            .count();
        &self[..count]
    }

    /// The lines a result's text block adds about them, if any.
    pub fn listing(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let shown = self.shown();
        let mut lines: Vec<String> = shown.iter().map(Person::sentence).collect();
        if self.len() > shown.len() {
            lines.push(format!("and {} more not listed", self.len() - shown.len()));
        }
        Some(format!("Where people are working:\n{}", lines.join("\n")))
    }

    /// Characters the `people` field and its listing take in a result.
    pub fn cost(&self) -> usize {
        if self.is_empty() {
            return 0;
        }
        let field = serde_json::to_string(self).map_or(0, |json| json.chars().count());
        field + self.listing().map_or(0, |l| l.chars().count())
    }
}

/// A result's `people` field: those it shows.
impl Serialize for People {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.shown())
    }
}

impl JsonSchema for People {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "People".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = Vec::<Person>::json_schema(generator);
        schema.insert("maxItems".into(), MAX_PEOPLE_SHOWN.into());
        schema
    }
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
        assert_eq!(ana.selections[0].start, Place { line: 1, column: 2 });
        assert_eq!(ana.selections[0].end, Place { line: 2, column: 4 });
        assert!(ana.is_on(2, 2) && ana.is_on(3, 9) && !ana.is_on(4, 4));
        assert!(
            people
                .listing()
                .unwrap()
                .contains("Ana: caret at line 1, column 1;")
        );
        let nobody = located([("Bo", &positions(r#"{"cursors":[50]}"#), false)], &text);
        assert!(nobody.is_empty() && nobody.listing().is_none());
    }
}
