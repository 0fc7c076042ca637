-- Each tenant reads its times in its own IANA time zone (docs/proposal-callback.md, "Time
-- zones"): the console's times, the silence watch's hours of the weekday, the operator's
-- emails. The service checks a name against the tz database before it is set; this check
-- only keeps out what could never be a zone name.
ALTER TABLE tenants ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'America/Sao_Paulo'
    CHECK (time_zone ~ '^[A-Za-z][A-Za-z0-9_+/-]{0,63}$');
