"""construct schemas (parse and build), generated from formats/ by rmqformats.codegen."""
