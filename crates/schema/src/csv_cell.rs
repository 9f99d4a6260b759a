//! CSV cells that are safe to open in a spreadsheet: text that a spreadsheet would run as a formula (it starts
//! with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, as spreadsheets expect; numbers stay
//! as they are. Every CSV the project writes from model or dataset text goes through [`csv_cell`].

use std::borrow::Cow;

/// The cell as written to a CSV file.
pub fn csv_cell(text: &str) -> Cow<'_, str> {
    let risky = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && text.trim().parse::<f64>().is_err() {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::csv_cell;

    #[test]
    fn formulas_are_defused_and_numbers_kept() {
        for (cell, written) in [
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "'=HYPERLINK(\"http://x\",\"y\")",
            ),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-1.5", "-1.5"),
            ("+3", "+3"),
            ("1e-9", "1e-9"),
            ("Oxygen", "Oxygen"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(csv_cell(cell), written, "{cell:?}");
        }
    }
}
