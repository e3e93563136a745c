/* Rejected (while loop): the marked region is a while loop, even with an affine condition. */
void clear_with_while(int n, double A[n])
{
    int i;

#pragma scop
    i = 0;
    while (i < n) {
        A[i] = 0.0;
        i++;
    }
#pragma endscop
}
