//! Writing positions: the heights of the stacks along the last axis.
//!
//! - `k = 1`: the length, e.g. `4`.
//! - `k = 2`: the row lengths, top row first, as for 2-D Chomp: `3 2 1`.
//! - `k = 3`: the heights of the stacks row by row, rows separated by `/`:
//!   `3 2 1 / 2 1 / 1` is the stacks `(0,0)`…`(0,2)` of heights 3, 2, 1, then
//!   `(1,0)`, `(1,1)` of heights 2, 1, then `(2,0)` of height 1.
//! - `k ≥ 4`: the same, one more slash for each outer axis: `//` separates
//!   the planes of a 4-D box, `///` the blocks of a 5-D one.
//!
//! Numbers are separated by spaces or commas. Missing heights at the end of
//! a row, and missing rows, are 0. A position must hold the origin (its
//! first height is at least 1), fit the box, and be closed downwards:
//! heights never increase along a row, a column or any other axis.

use super::rank::NdRanking;
use super::NdError;

#[derive(Debug, PartialEq)]
enum Tok {
    Num(u32),
    Sep(usize),
}

/// Parses a position of the box into its heights (row-major over the grid).
///
/// # Errors
/// [`NdError::Position`] naming the fault.
pub fn parse_position(r: &NdRanking, text: &str) -> Result<Vec<u8>, NdError> {
    let bad = |why: String| NdError::Position { text: text.to_string(), why };
    let toks = tokens(text).map_err(bad)?;
    let dims = r.dims();
    let g = dims.len() - 1;
    let mut h = vec![0u8; r.grid_cells()];
    let mut strides = vec![1usize; g];
    for i in (0..g.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1] as usize;
    }
    if g == 0 {
        match toks.as_slice() {
            [Tok::Num(v)] => h = vec![height(*v, r.top()).map_err(bad)?],
            _ => return Err(bad("a 1-D position is one number, its length".into())),
        }
    } else {
        fill(&toks, 0, 0, dims, &strides, r.top(), &mut h).map_err(bad)?;
    }
    if h[0] == 0 {
        return Err(bad("the position must hold the poisoned origin (its first height is at least 1)".into()));
    }
    for t in 1..h.len() {
        let c = r.coords(t).to_vec();
        for i in 0..g {
            if c[i] > 0 && h[t] > h[t - strides[i]] {
                let mut p = c.clone();
                p[i] -= 1;
                return Err(bad(format!(
                    "not closed downwards: the stack at {} (height {}) is higher than the one at {} (height {})",
                    coords_text(&c),
                    h[t],
                    coords_text(&p),
                    h[t - strides[i]]
                )));
            }
        }
    }
    debug_assert!(r.index(&h).is_some());
    Ok(h)
}

fn height(v: u32, top: u32) -> Result<u8, String> {
    if v > top {
        return Err(format!("height {v} exceeds the box's last side, {top}"));
    }
    Ok(v as u8)
}

fn coords_text(c: &[u8]) -> String {
    format!("({})", c.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
}

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            let mut v: u64 = 0;
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                v = (v * 10 + d.to_digit(10).unwrap() as u64).min(u32::MAX as u64);
                chars.next();
            }
            out.push(Tok::Num(v as u32));
        } else if c == '/' {
            let mut n = 0;
            while chars.peek() == Some(&'/') {
                n += 1;
                chars.next();
            }
            out.push(Tok::Sep(n));
        } else if c.is_whitespace() || c == ',' {
            chars.next();
        } else {
            return Err(format!("unexpected character {c:?} (write heights as numbers, rows separated by /)"));
        }
    }
    if out.is_empty() {
        return Err("empty (write the heights of the stacks, e.g. \"3 2 1 / 2 1 / 1\")".into());
    }
    Ok(out)
}

/// Fills the heights of grid axis `axis` from `toks`, whose entries along
/// that axis are separated by `g − 1 − axis` slashes.
fn fill(toks: &[Tok], axis: usize, base: usize, dims: &[u32], strides: &[usize], top: u32, h: &mut [u8]) -> Result<(), String> {
    let g = dims.len() - 1;
    let depth = g - 1 - axis;
    let side = dims[axis] as usize;
    let axis_name = |d: usize| match d {
        0 => "heights in a row".to_string(),
        1 => "rows".to_string(),
        _ => format!("groups separated by {}", "/".repeat(d)),
    };
    if depth == 0 {
        if let Some(Tok::Sep(n)) = toks.iter().find(|t| matches!(t, Tok::Sep(_))) {
            return Err(format!("{} separates more axes than the box has", "/".repeat(*n)));
        }
        if toks.len() > side {
            return Err(format!("{} {} where the box allows {side}", toks.len(), axis_name(0)));
        }
        for (j, t) in toks.iter().enumerate() {
            if let Tok::Num(v) = t {
                h[base + j * strides[axis]] = height(*v, top)?;
            }
        }
        return Ok(());
    }
    let groups: Vec<&[Tok]> = toks.split(|t| *t == Tok::Sep(depth)).collect();
    if let Some(Tok::Sep(n)) = toks.iter().find(|t| matches!(t, Tok::Sep(n) if *n > depth)) {
        return Err(format!("{} separates more axes than the box has", "/".repeat(*n)));
    }
    if groups.len() > side {
        return Err(format!("{} {} where the box allows {side}", groups.len(), axis_name(depth)));
    }
    for (j, group) in groups.iter().enumerate() {
        fill(group, axis + 1, base + j * strides[axis], dims, strides, top, h)?;
    }
    Ok(())
}

/// Writes a position in the syntax parsed by [`parse_position`], without
/// trailing zeros: `3 2 1 / 2 1 / 1`.
pub fn format_position(r: &NdRanking, h: &[u8]) -> String {
    let dims = r.dims();
    let g = dims.len() - 1;
    if g == 0 {
        return h.first().map_or(String::new(), |v| v.to_string());
    }
    format_axis(h, 0, dims)
}

fn format_axis(h: &[u8], axis: usize, dims: &[u32]) -> String {
    let g = dims.len() - 1;
    let depth = g - 1 - axis;
    let chunk = h.len() / dims[axis] as usize;
    let mut parts: Vec<String> = if depth == 0 {
        h.iter().map(|v| v.to_string()).collect()
    } else {
        h.chunks(chunk).map(|c| format_axis(c, axis + 1, dims)).collect()
    };
    while parts.last().is_some_and(|p| p.is_empty() || p == "0") {
        parts.pop();
    }
    if depth == 0 {
        parts.join(" ")
    } else {
        parts.join(&format!(" {} ", "/".repeat(depth)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        let r = NdRanking::new(&[3, 3, 3]).unwrap();
        let h = parse_position(&r, "3 2 1 / 2 1 / 1").unwrap();
        assert_eq!(h, vec![3, 2, 1, 2, 1, 0, 1, 0, 0]);
        assert_eq!(format_position(&r, &h), "3 2 1 / 2 1 / 1");
        assert_eq!(parse_position(&r, "3,2,1/2,1/1").unwrap(), h);
        assert_eq!(format_position(&r, &parse_position(&r, "1").unwrap()), "1");
        let r4 = NdRanking::new(&[2, 2, 2, 2]).unwrap();
        let h = parse_position(&r4, "2 2 / 2 1 // 1").unwrap();
        assert_eq!(h, vec![2, 2, 2, 1, 1, 0, 0, 0]);
        assert_eq!(format_position(&r4, &h), "2 2 / 2 1 // 1");
        let r2 = NdRanking::new(&[3, 4]).unwrap();
        assert_eq!(parse_position(&r2, "4 2").unwrap(), vec![4, 2, 0]);
        let r1 = NdRanking::new(&[5]).unwrap();
        assert_eq!(parse_position(&r1, "3").unwrap(), vec![3]);
        assert_eq!(format_position(&r1, &[3]), "3");
    }

    #[test]
    fn bad_positions() {
        let r = NdRanking::new(&[3, 3, 3]).unwrap();
        for bad in ["", "0", "4", "1 2", "1 / 2", "1 1 1 1", "1/1/1/1", "3 // 1", "a", "2 -1", "0 / 1"] {
            assert!(parse_position(&r, bad).is_err(), "{bad:?}");
        }
        let r1 = NdRanking::new(&[5]).unwrap();
        assert!(parse_position(&r1, "2 1").is_err());
        assert!(parse_position(&r1, "6").is_err());
    }
}
