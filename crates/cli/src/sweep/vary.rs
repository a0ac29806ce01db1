//! `--vary PATH=V1,V2,..`: a parameter of the grid, its values split on commas outside
//! brackets and quotes, and the scenario-file edits each value stands for (a field path
//! as given, or a shortcut such as `incast-degree` expanded against the file); and the
//! grid itself, the parameters' Cartesian product in mixed radix, the first outermost.
//!
//! Left out: whether the edits compile (every variant is compiled before any runs, in
//! `mod.rs`) and which fabric an edit applies to (`fabrics.rs`).

use std::collections::BTreeSet;

use scenario::variant::Edit;
use toml::{Table, Value};

/// A `--vary`: the name as given (a path or a shortcut), its values, and the edits each
/// value stands for.
pub(super) struct Param {
    pub(super) name: String,
    pub(super) values: Vec<String>,
    pub(super) edits: Vec<Vec<Edit>>,
}

/// Splits `V1,V2,..` on commas outside brackets, braces and quotes.
fn split_values(s: &str) -> Result<Vec<String>, String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for ch in s.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("`{s}`: unbalanced `{ch}`"));
                }
            }
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if depth != 0 {
        return Err(format!("`{s}`: unbalanced brackets"));
    }
    if quote.is_some() {
        return Err(format!("`{s}`: unterminated quote"));
    }
    out.push(cur.trim().to_string());
    if out.iter().any(|v| v.is_empty()) {
        return Err(format!("`{s}`: an empty value (two commas in a row, or a comma at an end?)"));
    }
    Ok(out)
}

fn senders_of_first_incast(t: &Table) -> Option<(usize, Vec<i64>)> {
    let Some(Value::Array(tr)) = t.get("traffic") else { return None };
    tr.iter().enumerate().find_map(|(i, x)| {
        (x.get("kind").and_then(Value::as_str) == Some("incast"))
            .then(|| (i, x.get("senders").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_integer).collect()).unwrap_or_default()))
    })
}

/// The edits one value of a `--vary` stands for.
fn expand(name: &str, value: &str, t: &Table) -> Result<Vec<Edit>, String> {
    let one = |path: &str, v: &str| Ok(vec![Edit::new(path, v)]);
    match name {
        "incast-degree" => {
            let (i, senders) = senders_of_first_incast(t).ok_or("incast-degree: the file has no incast traffic entry")?;
            let n =
                value.parse::<usize>().ok().filter(|n| (1..=senders.len()).contains(n)).ok_or_else(|| {
                    format!("incast-degree={value}: traffic[{i}] has {} senders; expected a whole number 1..{}", senders.len(), senders.len())
                })?;
            let list = senders[..n].iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
            one(&format!("traffic[{i}].senders"), &format!("[{list}]"))
        }
        "oversubscription" => {
            let topo = t.get("topology");
            if topo.and_then(|x| x.get("kind")).and_then(Value::as_str) != Some("leaf-spine") {
                return Err("oversubscription: only a leaf-spine topology has one".into());
            }
            if topo.and_then(|x| x.get("uplinks_per_spine")).is_some() {
                return Err("oversubscription: the file sets topology.uplinks_per_spine; remove it to sweep oversubscription".into());
            }
            if !value.parse::<f64>().is_ok_and(|x| x > 0.0) {
                return Err(format!("oversubscription={value}: expected a positive ratio such as 1, 2 or 1.5"));
            }
            one("topology.oversubscription", value)
        }
        "dcqcn" => one("roce.dcqcn.preset", value),
        "pfc" => match value {
            "on" | "true" => one("roce.pfc.enabled", "true"),
            "off" | "false" => one("roce.pfc.enabled", "false"),
            _ => Err(format!("pfc={value}: expected on or off")),
        },
        "headroom" => one("buffer.headroom", value),
        "ecn-kmin" => {
            let n = t.get("roce").and_then(|r| r.get("ecn")).and_then(Value::as_array).map_or(0, |a| a.len());
            if n == 0 {
                return Err("ecn-kmin: the file has no roce.ecn entries".into());
            }
            Ok((0..n).map(|i| Edit::new(format!("roce.ecn[{i}].kmin"), value)).collect())
        }
        path => {
            if !path.chars().all(|c| c.is_ascii_alphanumeric() || "_-.[]".contains(c)) {
                return Err(format!("`{path}` is neither a field path (roce.ecn[0].kmin) nor a shortcut (see --help)"));
            }
            one(path, value)
        }
    }
}

fn parse_vary(s: &str, t: &Table) -> Result<Param, String> {
    let (name, vals) = s.split_once('=').ok_or_else(|| format!("--vary `{s}`: expected PATH=V1,V2,.."))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("--vary `{s}`: empty field path"));
    }
    let values = split_values(vals).map_err(|m| format!("--vary {name}: {m}"))?;
    let mut seen = BTreeSet::new();
    for v in &values {
        if !seen.insert(v) {
            return Err(format!("--vary {name}: the value `{v}` is given twice"));
        }
    }
    let edits = values.iter().map(|v| expand(name, v, t)).collect::<Result<Vec<_>, _>>().map_err(|m| format!("--vary {m}"))?;
    Ok(Param { name: name.to_string(), values, edits })
}

/// Every `--vary`, in order; a name given twice is an error.
pub(super) fn params(vary: &[String], t: &Table) -> Result<Vec<Param>, String> {
    let mut params: Vec<Param> = vec![];
    for v in vary {
        let p = parse_vary(v, t)?;
        if params.iter().any(|q| q.name == p.name) {
            return Err(format!("--vary {}: given twice; list all its values in one --vary", p.name));
        }
        params.push(p);
    }
    Ok(params)
}

/// The parameter values of variant `v` (mixed radix, the last parameter fastest).
pub(super) fn combo(params: &[Param], mut v: usize) -> Vec<usize> {
    let mut idx = vec![0; params.len()];
    for (k, p) in params.iter().enumerate().rev() {
        idx[k] = v % p.values.len();
        v /= p.values.len();
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_outside_brackets_and_quotes() {
        assert_eq!(split_values("1,2, 3").unwrap(), ["1", "2", "3"]);
        assert_eq!(split_values("[3,4],[5, 6]").unwrap(), ["[3,4]", "[5, 6]"]);
        assert_eq!(split_values(r#""a,b",c"#).unwrap(), [r#""a,b""#, "c"]);
        assert!(split_values("1,,2").is_err());
        assert!(split_values("[1,2").is_err());
        assert!(split_values("1]").is_err());
    }

    #[test]
    fn the_first_parameter_is_outermost() {
        let p = |n: usize| Param { name: String::new(), values: vec![String::new(); n], edits: vec![] };
        let ps = [p(2), p(3)];
        let all: Vec<Vec<usize>> = (0..6).map(|v| combo(&ps, v)).collect();
        assert_eq!(all, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    }

    #[test]
    fn shortcuts_expand_against_the_file() {
        let t: Table = toml::from_str(
            "[topology]\nkind = \"leaf-spine\"\n[roce]\necn = [{ kmin = \"1KB\" }, { kmin = \"2KB\" }]\n[[traffic]]\nkind = \"incast\"\nsenders = [4, 5, 6]\n",
        )
        .unwrap();
        assert_eq!(expand("incast-degree", "2", &t).unwrap(), [Edit::new("traffic[0].senders", "[4, 5]")]);
        assert!(expand("incast-degree", "4", &t).unwrap_err().contains("1..3"));
        assert_eq!(expand("pfc", "off", &t).unwrap(), [Edit::new("roce.pfc.enabled", "false")]);
        assert_eq!(expand("ecn-kmin", "5KB", &t).unwrap().len(), 2);
        assert_eq!(expand("oversubscription", "2", &t).unwrap(), [Edit::new("topology.oversubscription", "2")]);
        assert!(expand("roce ecn", "1", &t).is_err());
    }
}
