//! Values across the sandbox's wall, built and read directly rather than through JSON text
//! (an item's fields in, a hook's answer out): the same data JSON.parse and JSON.stringify
//! would make, without writing and parsing the text on both sides. What is not plain data
//! (an object with a `toJSON` method, a proxy, an error, a big integer, nesting past
//! [`MAX_DEPTH`]: a cycle, most likely) is left to JSON.stringify, which says what is wrong.

use rquickjs::{Array, Ctx, Object, Type, Value};
use serde_json::Map;

/// Nesting past which an answer is read by JSON.stringify (which names a cycle).
const MAX_DEPTH: usize = 64;

/// The most values (array elements and fields, all nesting levels together) an answer may
/// hold: a sparse array's length costs the script nothing, but would cost kumo a value per
/// element.
pub(crate) const MAX_VALUES: usize = 1 << 22;

/// Why an answer was not read directly.
pub(crate) enum NotPlain {
    /// Not plain data: JSON.stringify reads it.
    Other,
    /// More than [`MAX_VALUES`] values.
    TooLarge,
}

/// `v` as a JavaScript value, as `JSON.parse` of its text would make it.
pub(crate) fn to_js<'js>(ctx: &Ctx<'js>, v: &serde_json::Value) -> rquickjs::Result<Value<'js>> {
    Ok(match v {
        serde_json::Value::Null => Value::new_null(ctx.clone()),
        serde_json::Value::Bool(b) => Value::new_bool(ctx.clone(), *b),
        serde_json::Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Value::new_int(ctx.clone(), i),
            None => Value::new_float(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
        serde_json::Value::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (i, item) in items.iter().enumerate() {
                array.set(i, to_js(ctx, item)?)?;
            }
            array.into_value()
        }
        serde_json::Value::Object(fields) => object_to_js(ctx, fields)?.into_value(),
    })
}

/// An object with `fields`, in their order.
pub(crate) fn object_to_js<'js>(
    ctx: &Ctx<'js>,
    fields: &Map<String, serde_json::Value>,
) -> rquickjs::Result<Object<'js>> {
    let object = Object::new(ctx.clone())?;
    for (k, v) in fields {
        object.set(k.as_str(), to_js(ctx, v)?)?;
    }
    Ok(object)
}

/// `v` as JSON data, as `JSON.stringify` would write it: `Ok(None)` for what it leaves out
/// (`undefined`, functions, symbols; `null` in an array).
pub(crate) fn from_js(v: &Value<'_>) -> Result<Option<serde_json::Value>, NotPlain> {
    let mut left = MAX_VALUES;
    read(v, 0, &mut left)
}

fn read(v: &Value<'_>, depth: usize, left: &mut usize) -> Result<Option<serde_json::Value>, NotPlain> {
    *left = left.checked_sub(1).ok_or(NotPlain::TooLarge)?;
    Ok(Some(match v.type_of() {
        Type::Undefined | Type::Uninitialized | Type::Function | Type::Constructor | Type::Symbol => {
            return Ok(None);
        }
        Type::Null => serde_json::Value::Null,
        Type::Bool => serde_json::Value::Bool(v.as_bool().ok_or(NotPlain::Other)?),
        Type::Int => serde_json::Value::from(v.as_int().ok_or(NotPlain::Other)?),
        Type::Float => number(v.as_float().ok_or(NotPlain::Other)?),
        Type::String => serde_json::Value::String(
            v.as_string().ok_or(NotPlain::Other)?.to_string().map_err(|_| NotPlain::Other)?,
        ),
        Type::Array if depth < MAX_DEPTH => {
            let array = v.as_array().ok_or(NotPlain::Other)?;
            // Read as a number first: rquickjs's `len` takes it for an i32.
            let len: f64 = array.as_object().get("length").map_err(|_| NotPlain::Other)?;
            if len > *left as f64 {
                return Err(NotPlain::TooLarge);
            }
            let mut out = Vec::with_capacity(len as usize);
            for item in array.iter::<Value>() {
                let item = item.map_err(|_| NotPlain::Other)?;
                out.push(read(&item, depth + 1, left)?.unwrap_or(serde_json::Value::Null));
            }
            serde_json::Value::Array(out)
        }
        Type::Object if depth < MAX_DEPTH => {
            let object = v.as_object().ok_or(NotPlain::Other)?;
            if object.get::<_, Value>("toJSON").map_or(true, |f| !f.is_undefined()) {
                return Err(NotPlain::Other);
            }
            let mut out = Map::new();
            for prop in object.props::<String, Value>() {
                let (k, item) = prop.map_err(|_| NotPlain::Other)?;
                if let Some(item) = read(&item, depth + 1, left)? {
                    out.insert(k, item);
                }
            }
            serde_json::Value::Object(out)
        }
        _ => return Err(NotPlain::Other),
    }))
}

/// A JavaScript number as JSON.stringify writes it: a whole number without a fraction (the
/// engine keeps `Math.round`'s answers as floats), `null` when not finite.
fn number(f: f64) -> serde_json::Value {
    // Below 2⁵³ every whole float is exactly an integer.
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return serde_json::Value::from(f as i64);
    }
    serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)
}
