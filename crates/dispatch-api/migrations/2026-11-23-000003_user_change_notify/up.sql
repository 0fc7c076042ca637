-- Every replica caches the users its requests authenticate; a change to a user (status,
-- profile, name) or to a profile tells them all to drop what they hold (auth::UserCache).
CREATE FUNCTION notify_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('dispatch_users', OLD.id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER users_changed AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION notify_user_changed();

CREATE FUNCTION notify_profiles_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('dispatch_users', '*');
    RETURN NULL;
END $$;
CREATE TRIGGER profiles_changed AFTER UPDATE OR DELETE ON profiles
    FOR EACH STATEMENT EXECUTE FUNCTION notify_profiles_changed();
