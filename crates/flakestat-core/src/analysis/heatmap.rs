//! The job matrix as two dimensions at once: rows are the dimension the hits are confined to
//! (else `python`, else the first that varies), columns each of the next dimensions that vary
//! (`platform`, `gpu`, `cuda`, …); each cell counts the impact window's jobs hit and run there.
//! Cells where no job ran are empty (`jobs_total` 0), never-hit cells that ran are zero.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{DimensionFinding, DimensionReport};
use crate::matrix::{Dimensions, JOB};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeatMap {
    pub rows: String,
    pub columns: String,
    /// Natural order, as in `dimensions`.
    pub row_values: Vec<String>,
    pub column_values: Vec<String>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<HeatCell>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct HeatCell {
    pub jobs_hit: u64,
    pub jobs_total: u64,
}

/// Column dimensions preferred, in this order; others follow in `dimensions` order.
const COLUMNS: &[&str] = &["platform", "gpu", "cuda"];
/// Heat maps per signature.
const MAX_MAPS: usize = 2;

pub fn heatmaps(
    jobs: &[(&Dimensions, bool)],
    dimensions: &[DimensionReport],
    findings: &[DimensionFinding],
) -> Vec<HeatMap> {
    if !jobs.iter().any(|(_, hit)| *hit) {
        return Vec::new();
    }
    let varies = |name: &str| {
        name != JOB
            && dimensions
                .iter()
                .find(|d| d.name == name)
                .is_some_and(|d| d.values.len() > 1)
    };
    let rows = findings
        .iter()
        .find(|f| f.significant && f.within.is_none() && varies(&f.dimension))
        .map(|f| f.dimension.clone())
        .or_else(|| varies("python").then(|| "python".to_string()))
        .or_else(|| {
            dimensions
                .iter()
                .find(|d| varies(&d.name))
                .map(|d| d.name.clone())
        });
    let Some(rows) = rows else {
        return Vec::new();
    };
    let mut columns: Vec<&str> = COLUMNS.iter().copied().filter(|c| varies(c)).collect();
    columns.extend(
        dimensions
            .iter()
            .map(|d| d.name.as_str())
            .filter(|n| !COLUMNS.contains(n) && varies(n)),
    );
    columns.retain(|c| *c != rows);
    columns
        .into_iter()
        .take(MAX_MAPS)
        .map(|c| heatmap(jobs, dimensions, &rows, c))
        .collect()
}

fn values(dimensions: &[DimensionReport], name: &str) -> Vec<String> {
    dimensions
        .iter()
        .find(|d| d.name == name)
        .map(|d| d.values.iter().map(|v| v.value.clone()).collect())
        .unwrap_or_default()
}

fn heatmap(
    jobs: &[(&Dimensions, bool)],
    dimensions: &[DimensionReport],
    rows: &str,
    columns: &str,
) -> HeatMap {
    let row_values = values(dimensions, rows);
    let column_values = values(dimensions, columns);
    let mut counts: BTreeMap<(&str, &str), HeatCell> = BTreeMap::new();
    for (dims, hit) in jobs {
        if let (Some(r), Some(c)) = (dims.get(rows), dims.get(columns)) {
            let cell = counts.entry((r, c)).or_default();
            cell.jobs_total += 1;
            cell.jobs_hit += u64::from(*hit);
        }
    }
    let cells = row_values
        .iter()
        .map(|r| {
            column_values
                .iter()
                .map(|c| {
                    counts
                        .get(&(r.as_str(), c.as_str()))
                        .copied()
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect();
    HeatMap {
        rows: rows.to_string(),
        columns: columns.to_string(),
        row_values,
        column_values,
        cells,
    }
}
