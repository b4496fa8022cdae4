"""Fast-path layout tables (field order, struct formats, enums, bit masks) derived from formats/."""
