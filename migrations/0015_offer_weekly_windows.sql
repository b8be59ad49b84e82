-- 0015: recurring weekly windows on offers (issue 17).
--
-- An owner who uses its nodes by day offers them at night and at weekends: the offer's period stays its outer
-- bound (and what the exclusion constraint compares), and within it the node is available only in the weekly
-- windows. The rules are stored as their canonical text ("mon-fri 18:00-08:00", domain/scheduling/weekly-windows.ts
-- parses and expands them, in the IANA timezone beside them); both null: the whole period, as before.
alter table offers add column weekly_rules text[] null;
alter table offers add column weekly_timezone text null;
alter table offers add constraint offers_weekly_complete
  check ((weekly_rules is null) = (weekly_timezone is null) and (weekly_rules is null or cardinality(weekly_rules) between 1 and 14));
