//! Job name → matrix dimensions.
