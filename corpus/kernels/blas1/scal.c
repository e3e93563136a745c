/* scal: scale every other entry of a float vector (stride-2 access). */
void scal_even(int n, float alpha, float x[n])
{
    int i;

    for (i = 0; i < n; i += 2)
        x[i] *= alpha;
}
