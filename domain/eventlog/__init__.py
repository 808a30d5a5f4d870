"""The record: the one eventsourcing application over the log, the public event schema and its mapper, the topics
events were stored under before a move, the commands and their handlers, the whole-store check."""
