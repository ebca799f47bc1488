//! The procedural tier's rule: what a new rule may be, and the text the trust gate scans.

use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::rules::row::{ItemRow, check_text};
use crate::types::*;

fn check_list(field: &'static str, list: &Option<Vec<String>>) -> Result<()> {
    for item in list.iter().flatten() {
        check_text(field, item)?;
    }
    Ok(())
}

/// Validates a new rule and builds its row, with the text the gate scans besides it
/// (steps and condition: everything that would drive an action).
pub(crate) fn rule_row(rule: &NewRule) -> Result<(ItemRow, String)> {
    check_text("text", &rule.text)?;
    if !rule.priority.is_finite() {
        return Err(MemoryError::invalid("priority", "must be a finite number"));
    }
    check_list("steps", &rule.steps)?;
    check_list("variables", &rule.variables)?;
    check_list("successCriteria", &rule.success_criteria)?;
    for (name, values) in rule.variable_values.iter().flatten() {
        check_text("variableValues", name)?;
        for value in values {
            check_text("variableValues", value)?;
        }
    }
    // The gate scans everything that would drive an action.
    let mut scanned = rule.text.clone();
    for part in rule.steps.iter().flatten().chain(rule.condition.iter()) {
        scanned.push('\n');
        scanned.push_str(part);
    }
    let body = json!({
        "condition": rule.condition,
        "steps": rule.steps,
        "variables": rule.variables,
        "variableValues": rule.variable_values,
        "successCriteria": rule.success_criteria,
    });
    let row = ItemRow {
        kind: MemoryKind::Procedural.as_str().to_owned(),
        text: rule.text.clone(),
        priority: Some(rule.priority),
        success_count: rule.steps.as_ref().map(|_| 0),
        body_json: Some(body.to_string()),
        ..ItemRow::default()
    };
    Ok((row, scanned))
}
