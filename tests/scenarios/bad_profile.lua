return {
  platform = {profile = "no_such_part"},
}
