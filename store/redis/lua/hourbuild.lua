-- lib: base hours
-- hourbuild writes queue q's hours named from their minutes (lib_hours):
-- the sums of its rolled minutes (set 'min') or its deepest samples (set
-- 'depth'), for minutehours.go. ARGV: prefix, queue, set, cutoff in ms,
-- retention in seconds, then hours in ms. Replies how many hours it wrote.
local q, set, cutoff, ttl = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
for i = 6, #ARGV do
  if set == 'depth' then
    rewrite_depth_hour(q, tonumber(ARGV[i]), cutoff, ttl)
  else
    rewrite_hour(q, tonumber(ARGV[i]), cutoff, ttl)
  end
end
return #ARGV - 5
