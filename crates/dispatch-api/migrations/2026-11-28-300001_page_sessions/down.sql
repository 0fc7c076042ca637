DROP TABLE dispatch.page_sessions;
