//! How the tools' schemas come from their types, through one generator:
//! input schemas from the arguments' types ([`super::args`]), output schemas
//! from each result's type ([`output`]) in the shape results are described
//! in here. And the two constants results hold, typed so that their schema
//! says they cannot be anything else.

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// What a type's schema is made by: its `JsonSchema::json_schema`.
pub type Derive = fn(&mut SchemaGenerator) -> Schema;

/// Draft 2020-12 without a `$schema`, every subschema inline: what a tool
/// definition holds is one self-contained schema per side.
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|settings| {
        settings.meta_schema = None;
        settings.inline_subschemas = true;
    })
}

/// The generator of input schemas: what a client may send.
pub fn input_generator() -> SchemaGenerator {
    settings().into_generator()
}

/// The outputSchema of a result type: how the type is serialized, in the
/// shape [`result_shape`] gives it.
pub fn output(derive: Derive) -> Value {
    let mut generator = settings().for_serialize().into_generator();
    let mut schema = derive(&mut generator);
    RecursiveTransform(result_shape).transform(&mut schema);
    schema.into()
}

/// The shape of every part of a result's schema, whatever order schemars
/// left its keys in:
/// - a result leaves out what it does not have and never sends `null`
///   (each such field has `skip_serializing_if`), so nothing is nullable;
/// - an integer is a JSON number, whatever its Rust width (no `format`);
/// - an object lists its `properties`, then which are `required`, and holds
///   no others; it has no description of its own (its type's doc comment is
///   for this code's readers; a field's is the client's);
/// - any other schema says its `type` first, then its limits, then its
///   description, and last the objects it holds (an `items` of objects, an
///   `anyOf`): what a field is comes before the shape of what it holds.
fn result_shape(schema: &mut Schema) {
    let Some(schema) = schema.as_object_mut() else {
        return;
    };
    never_null(schema);
    for noise in ["format", "title"] {
        schema.shift_remove(noise);
    }
    if schema.contains_key("properties") {
        object_shape(schema);
    } else {
        field_shape(schema);
    }
}

fn object_shape(object: &mut Map<String, Value>) {
    let properties = object.shift_remove("properties").unwrap_or_default();
    let required = object
        .shift_remove("required")
        .unwrap_or(Value::Array(Vec::new()));
    for dropped in ["type", "description", "additionalProperties"] {
        object.shift_remove(dropped);
    }
    let rest = std::mem::take(object);
    object.insert("type".into(), "object".into());
    object.insert("properties".into(), properties);
    object.insert("required".into(), required);
    object.insert("additionalProperties".into(), false.into());
    object.extend(rest);
}

fn field_shape(field: &mut Map<String, Value>) {
    if let Some(kind) = field.shift_remove("type") {
        field.shift_insert(0, "type".into(), kind);
    }
    let holds_objects =
        |key: &str, nested: &Value| key == "anyOf" || nested.get("properties").is_some();
    for key in ["description", "items", "anyOf"] {
        let last = field
            .get(key)
            .is_some_and(|value| key == "description" || holds_objects(key, value));
        if last && let Some(value) = field.shift_remove(key) {
            field.insert(key.into(), value);
        }
    }
}

/// Takes back what schemars adds to the schema of an `Option`, which a
/// client never receives as `null` (a result) or is asked not to send as
/// `null` (an argument): a `null` among the types, or beside the schema in
/// an `anyOf` (its description kept), or among a `const`'s values.
pub fn never_null(property: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            property["type"] = only;
        }
    }
    if let Some(Value::Array(values)) = property.get("enum")
        && let [value, Value::Null] = values.as_slice()
    {
        let value = value.clone();
        property.shift_remove("enum");
        property.insert("const".into(), value);
    }
    let null = Value::Object(Map::from_iter([("type".into(), "null".into())]));
    let nullable = property
        .get("anyOf")
        .and_then(Value::as_array)
        .filter(|any| any.len() == 2 && any[1] == null)
        .and_then(|any| any[0].as_object().cloned());
    if let Some(schema) = nullable {
        let description = property.get("description").cloned();
        *property = schema;
        if let Some(description) = description {
            property.insert("description".into(), description);
        }
    }
}

/// A unit type that serializes to one JSON value, and whose schema says
/// it is that value and nothing else.
macro_rules! constant {
    ($(#[$doc:meta])* $type:ident = $value:tt) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $type;

        impl Serialize for $type {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                Value::from($value).serialize(serializer)
            }
        }

        impl JsonSchema for $type {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($type).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "const": $value })
            }
        }
    };
}

constant!(
    /// `true`, and nothing else: what a result says that always holds (it
    /// is untrusted; a pad was created).
    True = true
);

constant!(
    /// `"rustpad"`: where an untrusted result's content came from.
    Rustpad = "rustpad"
);
