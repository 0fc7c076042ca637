DROP INDEX users_name_order;
CREATE INDEX users_name_order ON users (search_key(descriptive_name), id);
DROP FUNCTION search_order(text);
