// The entry point of the link checks (actors/CMakeLists.txt): each links one subsystem's
// objects with those it builds on; that it links at all is the check. Never run.
int main() {
  return 0;
}
