//! The only place SQL appears: the embedded SQLite store.
