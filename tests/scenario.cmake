# Scenario language: units, loading, validation, profiles.
