DROP TABLE proposal.console_sessions;
