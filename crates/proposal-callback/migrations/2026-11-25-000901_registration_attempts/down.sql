DROP TABLE registration_attempts;
