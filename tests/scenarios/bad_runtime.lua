local function oops() error("boom") end
return {platform = {profile = oops()}}
