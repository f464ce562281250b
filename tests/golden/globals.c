/* Globals and static locals: definitions, tentative definitions, extern declarations,
   file-scope statics, static locals of two functions with the same name, block-scope extern. */
int defined = 1;
int tentative;
int tentative;
extern int ext;
extern int ext_defined_later;
int ext_defined_later = 4;
static int file_static;
static int file_static_init = 2;
int arr[];
int arr[3];

int counter(void) {
    static int n;
    static int limit = 10;
    n++;
    return n < limit ? n : 0;
}

int counter2(void) {
    static int n = 100;
    extern int ext;
    return n++ + ext;
}

void uses(void) {
    file_static = defined + tentative + file_static_init + arr[1];
    int *p = &tentative;
    *p = ext_defined_later;
}
