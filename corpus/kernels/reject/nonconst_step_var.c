/* Rejected (non-constant step): the increment s is itself written in the loop. */
void growing_stride(int n, double A[n])
{
    int s = 1;

    for (int i = 0; i < n; i += s) {
        A[i] = 0.0;
        s = s + 1;
    }
}
