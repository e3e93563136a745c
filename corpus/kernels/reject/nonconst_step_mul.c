/* Rejected (non-constant step): the iterator doubles, so the step is not a constant. */
void mark_powers_of_two(int n, double A[n])
{
    int i;

    for (i = 1; i < n; i *= 2)
        A[i] = 1.0;
}
