"""The course: its spec (the one source of truth for stations, tasks and rules; the released specs are the JSON files
beside this module), its releases and which task a run gets."""
