/* Rejected (goto): control leaves the structured nest through a jump. */
void differences(int n, double A[n], double B[n])
{
    for (int i = 0; i < n; i++) {
        if (i == 0)
            goto skip;
        B[i] = A[i] - A[i - 1];
skip:
        ;
    }
}
