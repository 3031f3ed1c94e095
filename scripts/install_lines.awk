# The Makefile's install steps read the installer's output through this: a line now and then instead of
# minutes of silence (pip -q) or a line per package. Each line printed starts with four spaces.
#   uv:  "Resolved 67 packages in 0.9s", "Downloading pyarrow (52.5MiB)", "Prepared ...", "Installed ..."
#   pip: every 10th "Collecting X" counted, "Downloading X (40.5 MB)", "Installing collected packages: ...",
#        "Successfully installed ..."
# Errors and warnings from either are printed whole.
function say(text) { print "    " text; fflush() }
/^(Resolved|Prepared|Installed|Uninstalled|Audited) [0-9]+ package/ { say($0); next }
/^Downloading [^ ]+ \(/ { say("downloading " $2 " " $3); next }
/^Collecting / { n++; if (n % 10 == 0) say("collected " n " packages ..."); next }
/^ *Downloading .*\([0-9.]+ [kM]B\)/ { if ($0 ~ /MB\)/) say("downloading " $2 " " $3 " " $4); next }
/^Installing collected packages:/ { k = split(substr($0, 32), names, ", "); say("installing " k " packages ..."); next }
/^Successfully installed / { say("installed " (NF - 2) " packages"); next }
/^(ERROR|error|WARNING|warning)/ { say($0); next }
/^  (×|╰─▶|help:|Caused by:)/ { say($0); next }
