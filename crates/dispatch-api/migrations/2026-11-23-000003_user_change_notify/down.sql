DROP TRIGGER profiles_changed ON profiles;
DROP FUNCTION notify_profiles_changed();
DROP TRIGGER users_changed ON users;
DROP FUNCTION notify_user_changed();
