-- lib: base hours
-- hourbuild writes queue q's sums of the hours named from their minutes
-- (lib_hours), for minutehours.go. ARGV: prefix, queue, cutoff in ms,
-- retention in seconds, then hours in ms. Replies how many hours it wrote.
local q, cutoff, ttl = ARGV[2], tonumber(ARGV[3]), ARGV[4]
for i = 5, #ARGV do rewrite_hour(q, tonumber(ARGV[i]), cutoff, ttl) end
return #ARGV - 4
