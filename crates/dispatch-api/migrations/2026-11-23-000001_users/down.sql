DROP TABLE users;
DROP TABLE profiles;
